"""pi_nb.tokens exact counts: the bundled o200k_base / cl100k_base encodings, offline.

Known answers come from tiktoken's own test suite (tests/test_encoding.py: "hello world",
"hello <|endoftext|>", the cl100k regex cases, surrogate pairs) and from a published known-answer
table produced with tiktoken 0.14 (mixed-case words, CJK + emoji).
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb import (
    InvalidMessageError,
    MessageTokenBreakdown,
    TokenizerError,
    count_message_tokens,
    count_tokens,
    message_token_breakdown,
)
from pi_nb import tokens as tokens_module
from pi_nb._js import js_stringify
from pi_nb.messages import convert_to_llm
from pi_nb.tokens import DEFAULT_ENCODING, ENCODING_NAMES, get_encoding

MIXED = "I'm can't HELLO'S camelCaseWord  123456 \n\n  x"
CJK_EMOJI = "你好，世界 🌍🚀"

KNOWN: dict[str, list[tuple[str, list[int]]]] = {
    "cl100k_base": [
        ("hello world", [15339, 1917]),
        ("rer", [38149]),
        ("'rer", [2351, 81]),
        ("today\n ", [31213, 198, 220]),
        ("today\n \n", [31213, 27907]),
        ("today\n  \n", [31213, 14211]),
        (" \x850", [220, 126, 227, 15]),
        ("👍", [9468, 239, 235]),
        (
            MIXED,
            [
                40,
                2846,
                649,
                956,
                38757,
                1623,
                13575,
                50252,
                4301,
                11116,
                220,
                220,
                4513,
                10961,
                4815,
                220,
                865,
            ],
        ),
        (CJK_EMOJI, [57668, 53901, 3922, 3574, 244, 98220, 11410, 234, 235, 9468, 248, 222]),
    ],
    "o200k_base": [
        ("hello world", [24912, 2375]),
        (
            MIXED,
            [15390, 8535, 58527, 2699, 31233, 83330, 6187, 12929, 220, 220, 7633, 19354, 1202, 220, 1215],
        ),
        (CJK_EMOJI, [177519, 979, 28428, 130321, 235, 112927, 222]),
    ],
}
EOT = {"cl100k_base": 100257, "o200k_base": 199999}
N_VOCAB = {"cl100k_base": 100277, "o200k_base": 200019}


def test_encoding_names() -> None:
    assert ENCODING_NAMES == ("cl100k_base", "o200k_base")
    assert DEFAULT_ENCODING == "o200k_base"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_specs_match_tiktoken_openai_public(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """pat_str, special tokens and the sha256 are tiktoken's own (read from the installed package)."""
    from tiktoken_ext import openai_public

    seen: dict[str, Any] = {}

    def fake_load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["url"], seen["hash"] = url, expected_hash
        return {b"x": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)  # no download
    official = openai_public.ENCODING_CONSTRUCTORS[name]()
    spec = tokens_module._SPECS[name]
    assert official["name"] == name
    assert official["pat_str"] == spec.pat_str
    assert official["special_tokens"] == dict(spec.special_tokens)
    assert seen["hash"] == spec.sha256
    assert seen["url"].endswith(f"/{name}.tiktoken") and spec.file == f"{name}.tiktoken.gz"
    assert "explicit_n_vocab" not in official


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_known_answers(name: str) -> None:
    enc = get_encoding(name)
    assert enc.name == name
    assert enc.n_vocab == N_VOCAB[name]
    for text, ids in KNOWN[name]:
        assert enc.encode(text) == ids, text
        assert count_tokens(text, name) == len(ids)
        assert enc.decode(ids) == text
    assert enc.encode("<|endoftext|>", allowed_special="all") == [EOT[name]]
    assert enc.eot_token == EOT[name]


def test_cl100k_special_tokens_and_surrogates() -> None:
    enc = get_encoding("cl100k_base")
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]
    assert enc.encode("\ud83d\udc4d") == [9468, 239, 235]  # a pair written as two code points
    assert enc.encode("\ud83d") == enc.encode("�")  # a lone surrogate is U+FFFD


def test_count_tokens_treats_special_strings_as_text() -> None:
    # a user who types "<|endoftext|>" sends text, not the special token
    for name in ENCODING_NAMES:
        assert (
            count_tokens("<|endoftext|>", name)
            == len(get_encoding(name).encode_ordinary("<|endoftext|>"))
            > 1
        )
        assert count_tokens("x\ud83dy", name) == count_tokens("x\ufffdy", name)


def test_count_tokens_basics() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    assert count_tokens("a" * 10_000, "cl100k_base") > 0
    with pytest.raises(TypeError):
        count_tokens(b"hello")  # type: ignore[arg-type]
    with pytest.raises(
        TokenizerError, match="unknown encoding 'p50k_base'; bundled encodings: cl100k_base, o200k_base"
    ):
        count_tokens("x", "p50k_base")


def test_get_encoding_is_cached_and_thread_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_encoding("o200k_base") is get_encoding("o200k_base")
    # a fresh cache and eight threads asking at once: built exactly once
    builds: list[str] = []
    real_build = tokens_module._build_encoding

    def counting_build(name: str, data: bytes, source: str) -> Any:
        builds.append(name)
        return real_build(name, data, source)

    monkeypatch.setattr(tokens_module, "_cache", {})
    monkeypatch.setattr(tokens_module, "_build_encoding", counting_build)
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(get_encoding("cl100k_base"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert builds == ["cl100k_base"]
    assert len(results) == 8 and all(r is results[0] for r in results)


# --- integrity ------------------------------------------------------------------------------------


def _bundled(name: str) -> bytes:
    return (Path(tokens_module.__file__).parent / "_data" / f"{name}.tiktoken.gz").read_bytes()


def test_sha256_is_checked_on_the_decompressed_file() -> None:
    raw = gzip.decompress(_bundled("cl100k_base"))
    tampered = gzip.compress(raw.replace(b"IQ== 0\n", b"Ig== 0\n", 1))
    with pytest.raises(
        TokenizerError, match=r"'cl100k_base' \(test\) fails its sha256 check: expected 2239.*got "
    ):
        tokens_module._build_encoding("cl100k_base", tampered, "test")
    with pytest.raises(TokenizerError, match="fails its sha256 check"):
        tokens_module._build_encoding("cl100k_base", gzip.compress(raw[:-10]), "test")
    with pytest.raises(TokenizerError, match="not valid gzip data"):
        tokens_module._build_encoding("cl100k_base", raw[:1000], "test")
    with pytest.raises(TokenizerError, match="not valid gzip data"):
        tokens_module._build_encoding("o200k_base", _bundled("o200k_base")[:5000], "test")  # truncated


def test_missing_file_is_a_tokenizer_error(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tokens_module._SPECS["cl100k_base"]
    monkeypatch.setattr(tokens_module, "_cache", {})
    monkeypatch.setitem(
        tokens_module._SPECS,  # type: ignore[arg-type]
        "cl100k_base",
        tokens_module._EncodingSpec("gone.tiktoken.gz", spec.sha256, spec.pat_str, spec.special_tokens),
    )
    with pytest.raises(
        TokenizerError, match=r"bundled encoding 'cl100k_base' is missing: cannot read .*gone\.tiktoken\.gz"
    ):
        count_tokens("hello", "cl100k_base")


def test_the_bundled_files_are_the_official_ones() -> None:
    import hashlib

    for name in ENCODING_NAMES:
        raw = gzip.decompress(_bundled(name))
        assert hashlib.sha256(raw).hexdigest() == tokens_module._SPECS[name].sha256
    assert (
        tokens_module._SPECS["o200k_base"].sha256
        == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    )
    assert (
        tokens_module._SPECS["cl100k_base"].sha256
        == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    )


def test_counts_offline_with_an_empty_tiktoken_cache(tmp_path: Path) -> None:
    """A fresh interpreter, no network (sockets refused, proxies unroutable), empty tiktoken cache."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    code = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise OSError("network access attempted")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse

        import sys
        import pi_nb, pi_nb.tokens
        assert "tiktoken" not in sys.modules, "tiktoken imported by `import pi_nb`"
        assert pi_nb.count_tokens("hello world") == 2
        assert pi_nb.count_tokens("hello world", "cl100k_base") == 2
        assert pi_nb.tokens.get_encoding("o200k_base").encode("hello world") == [24912, 2375]
        assert pi_nb.tokens.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
        assert pi_nb.tokens.get_encoding("cl100k_base").encode("你好，世界 🌍🚀") == [
            57668, 53901, 3922, 3574, 244, 98220, 11410, 234, 235, 9468, 248, 222]
        assert pi_nb.tokens.get_encoding("o200k_base").encode("你好，世界 🌍🚀") == [
            177519, 979, 28428, 130321, 235, 112927, 222]
        print("ok")
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    unroutable = "http://10.255.255.1:9"
    env.update(
        TIKTOKEN_CACHE_DIR=str(cache),
        DATA_GYM_CACHE_DIR=str(cache),
        HTTP_PROXY=unroutable,
        HTTPS_PROXY=unroutable,
        ALL_PROXY=unroutable,
        http_proxy=unroutable,
        https_proxy=unroutable,
        NO_PROXY="",
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert list(cache.iterdir()) == []  # nothing was cached: nothing was fetched


# --- per-message counts -------------------------------------------------------------------------

IMG = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def n(text: str, enc: str = "o200k_base") -> int:
    return count_tokens(text, enc)


@pytest.mark.parametrize("enc", ["o200k_base", "cl100k_base"])
def test_user_and_tool_result(enc: str) -> None:
    assert count_message_tokens({"role": "user", "content": "hello world", "timestamp": 1}, enc) == 2
    blocks = [{"type": "text", "text": "first part"}, IMG, {"type": "text", "text": "second"}, IMG]
    b = message_token_breakdown({"role": "user", "content": blocks, "timestamp": 1}, enc)
    assert b == MessageTokenBreakdown(enc, text=n("first part", enc) + n("second", enc), images=2)
    assert b.total == b.text
    tool = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "read",
        "content": blocks,
        "isError": False,
        "timestamp": 1,
    }
    assert message_token_breakdown(tool, enc) == b


def test_assistant_parts() -> None:
    args = {"path": "src/app.py", "offset": 1.0, "limit": 10**22}
    msg = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me look at the file."},
            {"type": "text", "text": "Reading it now."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": args},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},  # not part of an assistant reply
        ],
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 1,
    }
    b = message_token_breakdown(msg)
    assert b.thinking == n("Let me look at the file.")
    assert b.text == n("Reading it now.")
    # the JSON is JavaScript's: {"path":"src/app.py","offset":1,"limit":1e+22}
    assert js_stringify(args) == '{"path":"src/app.py","offset":1,"limit":1e+22}'
    assert b.tool_calls == n("read") + n(js_stringify(args))
    assert b.images == 0
    assert b.total == b.text + b.thinking + b.tool_calls == count_message_tokens(msg)
    assert b.to_dict() == {
        "encoding": "o200k_base",
        "text": b.text,
        "thinking": b.thinking,
        "toolCalls": b.tool_calls,
        "images": 0,
        "total": b.total,
    }


@pytest.mark.parametrize(
    "message",
    [
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\nb",
            "exitCode": 1,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": "/tmp/f.log",
            "timestamp": 1,
        },
        {
            "role": "bashExecution",
            "command": "echo",
            "output": "",
            "exitCode": None,
            "cancelled": True,
            "truncated": False,
            "timestamp": 1,
        },
        {
            "role": "custom",
            "customType": "note",
            "content": "a note for the model",
            "display": True,
            "timestamp": 1,
        },
        {
            "role": "custom",
            "customType": "note",
            "content": [{"type": "text", "text": "see image"}, IMG],
            "display": True,
            "timestamp": 1,
        },
        {"role": "branchSummary", "summary": "We tried X and it failed.", "fromId": "abc", "timestamp": 1},
        {
            "role": "compactionSummary",
            "summary": "## Goal\nFix the bug.",
            "tokensBefore": 5000,
            "timestamp": 1,
        },
    ],
    ids=lambda m: m["role"],
)
def test_custom_roles_count_their_llm_rendering(message: dict[str, Any]) -> None:
    (rendered,) = convert_to_llm([message])
    content = rendered["content"]
    assert isinstance(content, list)
    want = sum(n(block["text"]) for block in content if block["type"] == "text")
    images = sum(block["type"] == "image" for block in content)
    b = message_token_breakdown(message)
    assert (b.text, b.images, b.total) == (want, images, want)
    assert b.text > 0


def test_summary_count_includes_the_wrapper() -> None:
    summary = {"role": "compactionSummary", "summary": "CS", "tokensBefore": 1, "timestamp": 1}
    text = "The conversation history before this point was compacted into the following summary:\n\n<summary>\nCS\n</summary>"
    assert count_message_tokens(summary) == n(text)


def test_excluded_and_unknown_messages_count_zero() -> None:
    excluded = {
        "role": "bashExecution",
        "command": "secret",
        "output": "x" * 100,
        "excludeFromContext": True,
        "timestamp": 1,
    }
    assert message_token_breakdown(excluded) == MessageTokenBreakdown("o200k_base")
    assert count_message_tokens({"role": "system", "content": "x" * 100}) == 0
    with pytest.raises(TokenizerError):
        count_message_tokens({"role": "system", "content": "x"}, "gpt2")


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": None},
        {"role": "user"},
        {"role": "user", "content": [None]},
        {"role": "user", "content": [{"type": "text", "text": 5}]},
        {"role": "assistant", "content": [{"type": "text"}]},
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": [{"type": "toolCall", "name": "x"}]},
        "not a message",
    ],
)
def test_bad_messages_raise(message: Any) -> None:
    with pytest.raises(InvalidMessageError):
        count_message_tokens(message)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200))
def test_count_is_bounded_by_utf8_bytes(text: str) -> None:
    for name in ENCODING_NAMES:
        count = count_tokens(text, name)
        assert (count == 0) == (text == "")
        assert count <= len(text.encode("utf-8", "surrogatepass"))
        enc = get_encoding(name)
        assert enc.decode(enc.encode_ordinary(text)) == text  # st.text() draws no surrogates
