"""``prepare_compaction``'s fast path (every entry a plain dict) equals its checked path.

For plain-dict entries ``prepare_compaction`` reads each entry's type once with whole-list
operations, collects the summarised messages, their file operations and the entries' ids and
parent ids in one pass, and computes ``tokens_before`` from those links afterwards. Entries that
are not plain dicts (here: a read-only ``Mapping`` around each one) take the checked loops and the
projection's own parent walk. Both must give the same preparation, the same ``None`` and the same
error, on generated session paths (tests/golden/make_compaction.py's generator) and on broken
variants of them (missing entries, repeated ids, wrong parents, cycles, malformed entries).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.compaction import CompactionSettings, prepare_compaction
from pi_nb.compaction import preparation as prep_mod

sys.path.insert(0, str(Path(__file__).parent / "golden"))
from make_compaction import make_path


class Entry(Mapping[str, Any]):
    """A session entry that is a Mapping but not a dict: forces the checked path."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def outcome(entries: list[Any], keep: int) -> Any:
    try:
        prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=keep))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    return None if prep is None else prep.to_dict()


def mutate(entries: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = [dict(e) for e in entries]
    if not out:
        return out
    for _ in range(rng.randint(1, 2)):
        i = rng.randrange(len(out))
        kind = rng.randrange(7)
        if kind == 0 and len(out) > 1:
            del out[i]  # a gap: the walk stops there
        elif kind == 1:
            out[i]["id"] = out[rng.randrange(len(out))].get("id")  # a repeated id
        elif kind == 2:
            out[i]["parentId"] = out[rng.randrange(len(out))].get("id")  # a wrong parent (maybe a cycle)
        elif kind == 3:
            out[i]["id"] = rng.choice([None, "", 7, ["x"]])
        elif kind == 4:
            out[i]["message"] = rng.choice(
                [None, "text", {"role": "assistant"}, {"role": "user", "content": None}]
            )
        elif kind == 5:
            out[0]["parentId"] = out[-1].get("id")
        else:
            out[i], out[-1] = out[-1], out[i]
    return out


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0, 200, 2_000, 20_000]), st.booleans())
def test_plain_and_checked_paths_agree(seed: int, keep: int, broken: bool) -> None:
    entries = make_path(seed)
    if broken:
        entries = mutate(entries, random.Random(seed))
    assert outcome(entries, keep) == outcome([Entry(e) for e in entries], keep)


@pytest.mark.parametrize("seed", range(40))
def test_the_one_pass_gives_the_separate_passes_results(seed: int) -> None:
    """The links collected in the messages pass give the same chain test as reading them anew."""
    entries = make_path(seed)
    types = prep_mod._plain_types(entries)
    if types is None:
        return
    rng = random.Random(seed)
    start = rng.randint(0, len(entries))
    end = rng.randint(start, len(entries))
    ids: list[object] = []
    parents: list[object] = []
    with_links = prep_mod._first_messages(
        entries, start, end, prep_mod.create_file_ops(), types, (ids, parents)
    )
    assert with_links == prep_mod._first_messages_checked(entries, start, end, prep_mod.create_file_ops())
    assert ids == [e.get("id") for e in entries[start:end]]
    assert parents == [e.get("parentId") for e in entries[start:end]]
    assert prep_mod._is_chain(entries, True, (start, ids, parents)) == prep_mod._is_chain(entries)
