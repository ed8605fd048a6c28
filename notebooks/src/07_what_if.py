# %% [markdown]
# # 07 · What if: replaying compaction policies, token spans, corpora
#
# Pi decides *when* to compact from three numbers: the model's context window, `reserveTokens`
# and `keepRecentTokens`. A recorded session holds everything those rules looked at — every
# message, every usage the provider reported — so the decisions can be **replayed** under another
# policy without calling a model: *what would this session have looked like with a smaller
# window, or another reserve?*
#
# `pi_nb.what_if` walks a session's active branch in order and runs Pi 0.85's own rules at the
# three places Pi checks (after a run, before a new prompt, between turns inside a run). Where Pi
# would compact, it cuts the simulated history exactly where Pi's `prepareCompaction` cuts and
# inserts a compaction entry, so every later decision sees the compacted context.
#
# The sessions here are the ones in `data/real-pi/`: written by the **real Pi 0.85.0** CLI (see
# `data/README.md`). Nothing in this notebook needs a network or a key.

# %%
import json
import os
import pathlib
import tempfile

from pi_nb import replay
from pi_nb.notebook.what_if import compactions_compare_df, decisions_df, plot_replay, plot_sweep, steps_df, sweep_df

DATA = pathlib.Path("data/real-pi").resolve()  # relative to this notebook's folder
work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-07-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
sorted(p.name for p in DATA.glob("*.jsonl"))

# %% [markdown]
# ## 1. Replay agrees with reality
#
# `compaction.jsonl` was recorded on a 6,000-token window with `reserveTokens` 1,500 and
# `keepRecentTokens` 1,500. Pi compacted on its own once (between two turns), then the user typed
# `/compact`. Replaying that same policy must find Pi's own automatic compaction: same place, same
# `firstKeptEntryId`, same `tokensBefore`. (A manual `/compact` is not a decision of the policy,
# so the replay does not make it.)

# %%
same = replay(DATA / "compaction.jsonl", context_window=6000, reserve_tokens=1500, keep_recent_tokens=1500)
compactions_compare_df(same)[
    ["position", "sim_checkpoint", "sim_first_kept_entry_id", "sim_tokens_before",
     "rec_checkpoint", "rec_first_kept_entry_id", "rec_tokens_before", "same"]
]

# %% [markdown]
# Every checkpoint the replay passed is a row: the number Pi compared with the threshold, where
# it came from (the provider's `usage`, or Pi's chars/4 `estimate` of the messages after the last
# usage), and what Pi's rules decided.

# %%
decisions = decisions_df(same)
print(decisions["outcome"].value_counts().to_string())
decisions[decisions["tokens"] > 4000][["checkpoint", "position", "tokens", "tokens_source", "threshold", "outcome", "first_kept_entry_id"]]

# %% [markdown]
# ## 2. A smaller window, a larger one
#
# With 4,500 tokens the same conversation compacts earlier and more often; with 12,000 it never
# does. The plot puts the replayed context (solid) over the recorded one (dashed); triangles are
# the replay's compactions, crosses the recording's.

# %%
small = replay(DATA / "compaction.jsonl", context_window=4500, reserve_tokens=1500, keep_recent_tokens=1000)
large = replay(DATA / "compaction.jsonl", context_window=12000, reserve_tokens=1500, keep_recent_tokens=1500)
print(f"4,500-token window: {len(small.compactions)} compactions, peak {small.peak_context_tokens:,} tokens")
print(f"12,000-token window: {len(large.compactions)} compactions, peak {large.peak_context_tokens:,} tokens")
plot_replay(small)

# %%
decisions_df(small).query("compacted")[
    ["checkpoint", "position", "tokens", "tokens_source", "first_kept_entry_id", "tokens_before",
     "tokens_after", "is_split_turn", "tokens_summarized", "summary_source"]
]

# %% [markdown]
# **Stale usage.** After the replay compacts where the recording did not, the recorded usage of
# the next answers counts a context the simulated agent never sent (the recorded one was
# bigger). The replay *rebases* it: the provider's number moves by the difference of Pi's own
# per-message estimates of the two requests (`simulated_usage_tokens` below). Pass
# `usage="recorded"` to see what the stale numbers would decide instead.

# %%
steps = steps_df(small)
steps[steps["usage_tokens"] != steps["simulated_usage_tokens"]][
    ["position", "kind", "usage_tokens", "simulated_usage_tokens", "simulated_tokens", "recorded_tokens"]
].head(6)

# %% [markdown]
# **Summaries.** Without a model the new compactions get a placeholder summary of a realistic
# length (the recorded summaries' mean, with Pi's headings and the exact file lists). With a
# model, `areplay` asks it for real ones; here pi_nb's offline model writes them.

# %%
from pi_nb import areplay
from pi_nb.providers import OfflineModel

written = await areplay(
    DATA / "compaction.jsonl", context_window=4500, reserve_tokens=2000, keep_recent_tokens=1000, model=OfflineModel()
)
first = next(c for c in written.compactions if c.summary_source == "model")
print(first.entry["summary"][:600])

# %% [markdown]
# ## 3. A policy sweep
#
# A grid of policies over every sample session: one tidy row per (session, policy) with the
# compactions it makes, the tokens it sends to the summariser and the peak context. `workers=2`
# replays the files in two processes.

# %%
grid = sweep_df(
    DATA,
    context_window=[4000, 5000, 6000, 8000, 12000],
    reserve_tokens=[1000, 2000],
    keep_recent_tokens=[1000, 3000],
    workers=2,
)
print(len(grid), "rows")
grid.groupby(["context_window", "reserve_tokens"])[["compactions", "tokens_summarized", "peak_context_tokens"]].sum()

# %%
plot_sweep(grid, x="context_window", y="compactions", hue="reserve_tokens")

# %% [markdown]
# ## 4. Token spans: what the tokenizer sees
#
# Pi estimates tokens as characters / 4. The view below cuts a message the way `o200k_base` does:
# one coloured span per token (hover for its id), spaces `·`, tabs `→`, line breaks `↵`. The
# header compares Pi's estimate, tiktoken and — for an answer — the provider's own `output` count.

# %%
from pi_nb import SessionManager
from pi_nb.notebook.token_spans import token_comparison_df, token_view, turn_comparison_df

tools = SessionManager.in_memory(None, entries=[json.loads(line) for line in (DATA / "tools.jsonl").read_text().splitlines()])
messages = [e for e in tools.get_branch() if e["type"] == "message"]
answer = next(e for e in messages if e["message"]["role"] == "assistant" and e["message"]["stopReason"] == "stop")
token_view(answer, max_tokens=300)

# %%
result = next(e for e in messages if e["message"]["role"] == "toolResult")
token_view(result, max_tokens=120)

# %% [markdown]
# Per message and per turn: the three sources side by side. A turn's `overhead_tokens` is what
# the provider counted beyond the messages themselves: the system prompt, the tool schemas and
# the chat framing.

# %%
token_comparison_df(DATA / "tools.jsonl")[["turn", "role", "estimate_tokens", "tiktoken_tokens", "usage_output", "estimate_minus_tiktoken"]].head(8)

# %%
turn_comparison_df(DATA / "tools.jsonl")[
    ["turn", "messages", "estimate_tokens", "tiktoken_tokens", "assistant_tiktoken_tokens", "usage_output",
     "context_estimate_tokens", "context_tiktoken_tokens", "context_usage_tokens", "overhead_tokens"]
]

# %% [markdown]
# ## 5. Corpora: in parallel, and on Dask
#
# An analyst's question is rarely about one session. `load_corpus` reads a directory of session
# files into the frames in worker processes, a few files at a time (bounded memory), and gives
# the same frames as the in-memory functions. `corpus_dask` does the same past one machine: a
# bag of file paths becomes a partitioned Dask frame, computed here on a local `distributed`
# cluster. A corpus of 300 sessions, copies of the samples under new session ids:

# %%
import time
import uuid

corpus = work / "corpus"
for k in range(100):
    for src in sorted(DATA.glob("*.jsonl")):
        lines = src.read_text().splitlines()
        header = json.loads(lines[0]) | {"id": str(uuid.UUID(int=k * 16 + len(src.name)))}
        folder = corpus / f"--demo-{k % 10}--"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{k:03d}_{src.name}").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")

from pandas.testing import assert_frame_equal

from pi_nb.notebook.corpus import canonical, corpus_dask, load_corpus
from pi_nb.notebook.frames import usage_df

t = time.perf_counter()
in_memory = usage_df(corpus)
t_memory = time.perf_counter() - t
t = time.perf_counter()
parallel = load_corpus(corpus, ["usage"], workers=2)["usage"]
t_parallel = time.perf_counter() - t
assert_frame_equal(parallel, in_memory)
print(f"{in_memory['session_file'].nunique()} files, {len(in_memory):,} usage rows")
print(f"in memory: {t_memory:.2f} s; two processes: {t_parallel:.2f} s; same frame: yes")

# %%
import logging

from dask.distributed import Client, LocalCluster

# a loaded machine can make the cluster's shutdown log a closed connection (at INFO) to stderr
logging.getLogger("distributed").setLevel(logging.ERROR)
with LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=logging.CRITICAL
) as cluster, Client(cluster):
    lazy = corpus_dask(corpus, "usage", files_per_partition=50)
    print(lazy.npartitions, "partitions")
    on_dask = lazy.compute().reset_index(drop=True)
assert_frame_equal(on_dask, canonical("usage", in_memory))
on_dask.groupby("model")[["input", "output", "context_tokens"]].sum()
