# %% [markdown]
# # 09 · Other agents: Claude Code and Codex sessions beside Pi's
#
# Most token-usage data people hold is not Pi's: it is Claude Code's transcripts
# (`~/.claude/projects/<project>/<session>.jsonl`) and Codex CLI's rollouts
# (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`). pi_nb reads both, read-only, into the same
# session model as Pi's own files: each record becomes a Pi entry (messages, tool calls and
# results, usage, compactions), linked into a tree by `parentId`. Every frame, plot and view of
# pi_nb then takes them unchanged, and a `harness` column says who wrote each row.
#
# Nothing is dropped: a field with no Pi counterpart is kept in the `raw` column, and a record
# with no Pi counterpart (a file-history snapshot, a turn context, a rate-limit event) becomes a
# Pi `custom` entry — in the tree, never in the context. The field-by-field mapping is in the
# docs ("Other agents' sessions").
#
# The transcripts in `data/other-agents/` come from public repositories (MIT-licensed;
# `data/other-agents/SOURCES.md` says where each comes from): most are captures of live Claude
# Code and Codex CLI sessions that those projects published, one is a Claude Code compaction
# written by hand in the format by a project's authors. The Pi sessions are the real Pi 0.85.0
# recordings of `data/real-pi/`.

# %%
import pathlib
import shutil
import tempfile

from pi_nb.harness import detect_harness

DATA = pathlib.Path("data").resolve()  # relative to this notebook's folder
OTHER = DATA / "other-agents"
# one mixed folder, as an analyst's disk holds them: every harness in its own layout
mixed = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-09-")) / "sessions"
for src, dst in [(OTHER / "claude-code", "claude/projects/demo"), (OTHER / "codex", "codex/sessions/2026/01/01"), (DATA / "real-pi", "pi/--tmp-pi-nb-demo--")]:
    shutil.copytree(src, mixed / dst, ignore=shutil.ignore_patterns("*.md", "*.py"))
files = sorted(mixed.rglob("*.jsonl"))
{str(p.relative_to(mixed)): detect_harness(p) for p in files}

# %% [markdown]
# The format is detected from the file's first records, never from its name or folder: a Pi
# file starts with its session header, a Claude Code record carries `uuid`, `parentUuid` and
# `sessionId`, a Codex rollout line is `{timestamp, type, payload}`.
#
# ## One frame over every harness
#
# `sessions_df(folder)` reads the whole folder: one row per session, with its harness, the
# token sums the providers reported, the cost at the catalog's prices, the compactions and the
# tool calls.

# %%
import pandas as pd

from pi_nb.notebook import compactions_df, messages_df, sessions_df, tool_results_df, usage_df

sessions = sessions_df(mixed)
sessions[["harness", "harness_version", "session_id", "model", "entries", "responses", "tool_calls", "tool_errors", "compactions", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_total"]]

# %% [markdown]
# ## Token use, harness by harness
#
# The providers count differently, and the readers put every count in Pi's terms: Pi's `input`
# excludes what was read from the cache (`cacheRead`), as Anthropic's `input_tokens` does; Codex
# reports `input_tokens` *including* `cached_input_tokens`, so its reader subtracts them. After
# that, the columns add up the same way for every harness: `total_tokens = input + output +
# cache_read + cache_write`.

# %%
usage = usage_df(mixed)
by_harness = usage.groupby("harness")[["input", "output", "cache_read", "cache_write", "total_tokens", "cost_total"]].sum()
by_harness["cache share of input"] = (by_harness["cache_read"] / (by_harness["input"] + by_harness["cache_read"] + by_harness["cache_write"])).round(3)
by_harness

# %%
check = usage.assign(parts=usage["input"] + usage["output"] + usage["cache_read"] + usage["cache_write"])
(check["parts"] == check["total_tokens"]).groupby(check["harness"]).mean().rename("rows where the parts add up")

# %% [markdown]
# How close each session ran to its window: `context_tokens` is Pi's
# `calculateContextTokens(usage)` of each response — the number Pi compares with its threshold.

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(8, 3.5))
for (harness, sid), rows in usage.groupby(["harness", "session_id"]):
    ax.plot(range(len(rows)), rows["context_tokens"], marker=".", label=f"{harness} · {sid[:8]}")
ax.set_xlabel("response")
ax.set_ylabel("context tokens")
ax.set_title("Context size per response, every session of the folder")
ax.legend(fontsize=7, ncol=2)
plt.show()

# %% [markdown]
# ## Compactions across harnesses
#
# Claude Code writes a `compact_boundary` record and a summary message; Codex writes a
# `compacted` item; Pi writes a `compaction` entry. All three are `compaction` entries here, with
# the context size before and the summary, so the three agents' strategies can be compared: how
# large was the context when they compacted, and how much did the summary keep?

# %%
compactions = compactions_df(mixed)
compactions[["harness", "session_id", "tokens_before", "summary_chars", "summary_estimate_tokens", "estimate_tokens_after"]]

# %%
compactions.groupby("harness").agg(
    compactions=("entry_id", "size"),
    tokens_before=("tokens_before", "median"),
    summary_tokens=("summary_estimate_tokens", "median"),
    after=("estimate_tokens_after", "median"),
)

# %% [markdown]
# ## Tool results
#
# Claude Code's `tool_result` blocks and Codex's `function_call_output` items become Pi
# `toolResult` messages, with the tool's name taken from the call. Their sizes show which tools
# fill the context; Claude Code's own structured result (`toolUseResult`) stays in `raw`.

# %%
results = tool_results_df(mixed)
results.groupby(["harness", "tool_name"]).agg(results=("entry_id", "size"), errors=("is_error", "sum"), bytes=("content_bytes", "sum"), largest=("content_bytes", "max"))

# %%
messages = messages_df(mixed)
pd.crosstab(messages["harness"], messages["role"])

# %% [markdown]
# ## The views
#
# The tree and the budget views take these sessions as they take Pi's. A Claude
# Code transcript with a compaction shows the compaction entry on its branch; the budget counts
# the context the model saw after it.

# %%
from pi_nb.notebook import session_tree, token_budget

claude_with_compaction = sessions[(sessions["harness"] == "claude-code") & (sessions["compactions"] > 0)]["session_file"].iloc[0]
session_tree(claude_with_compaction)

# %% [markdown]
# The budget of the Claude Code session that ran closest to its window: Claude Code's
# `input_tokens` + cache reads + cache writes of the last response are the provider usage Pi's
# threshold reads.

# %%
fullest = sessions[sessions["harness"] == "claude-code"].sort_values("last_context_tokens").iloc[-1]["session_file"]
token_budget(fullest, model_context_window=200_000)

# %% [markdown]
# ## What if Claude Code and Codex had used Pi's policy?
#
# The what-if replay (notebook 07) walks a recorded session and runs Pi 0.85's compaction rules at
# every checkpoint. On another agent's session it answers: with Pi's policy and a smaller window
# (here 60 % of the session's peak context, a reserve and a kept part of an eighth of it), where
# would the history have been compacted, and how large would the context have grown? One session
# of each harness that starts at its beginning is replayed (the `localpush` Codex file with the
# remote compaction is a window cut out of a long session: its first request already holds
# 200k tokens of history that is not in the file, so there is nothing a policy could cut).

# %%
from pi_nb import replay
from pi_nb.notebook.what_if import decisions_df, plot_replay

chosen = ["ccviewer_fe5e1c67_first37.jsonl", "ai-sessions-pomodoro-0.47-turns-1-2.jsonl"]
replays = {}
for _, row in sessions[sessions["session_file"].map(lambda f: pathlib.Path(f).name in chosen)].iterrows():
    window = max(int(row["peak_context_tokens"] * 0.6), 4000)
    replays[row["harness"]] = (row, window, replay(row["session_file"], context_window=window, reserve_tokens=window // 8, keep_recent_tokens=window // 8))
for harness, (row, window, r) in replays.items():
    print(
        f"{harness:<12} {pathlib.Path(row['session_file']).name}: {row['responses']} responses, recorded peak "
        f"{int(row['peak_context_tokens']):,} tokens; Pi's policy at {window:,}: {len(r.compactions)} compaction(s), "
        f"replayed peak {r.peak_context_tokens:,}"
    )
plot_replay(replays["claude-code"][2])

# %%
pd.concat({h: decisions_df(r)["outcome"].value_counts() for h, (_, _, r) in replays.items()}, axis=1).fillna(0).astype(int)

# %% [markdown]
# The context policies of notebook 08 run on these sessions too: one row per policy and session,
# with the requests sent, the history rewrites and the peak context.

# %%
from pi_nb.policies import ObservationMasking, PiPolicy, replay_policy

rows = []
for harness, (row, window, _) in replays.items():
    for policy in (PiPolicy(reserve_tokens=window // 8, keep_recent_tokens=window // 8), ObservationMasking()):
        out = replay_policy(row["session_file"], policy, context_window=window).outcome()
        rows.append({"harness": harness, **out})
pd.DataFrame(rows)[["harness", "policy", "requests", "rewrites", "compactions", "peak_tokens", "prompt_tokens"]]

# %% [markdown]
# ## Export to Inspect AI
#
# With the optional extra (`pip install "pi_nb[inspect]"`), any session — Pi's, Claude Code's or
# Codex's — is written as an Inspect AI eval log with inspect_ai's own log API, so Inspect View
# and Inspect's `samples_df` open it.

# %%
try:
    import inspect_ai  # noqa: F401
except ImportError:
    print("inspect_ai is not installed: pip install 'pi_nb[inspect]'")
else:
    from inspect_ai.analysis import samples_df

    from pi_nb.export.inspect import write_inspect_log

    log = write_inspect_log([f for f in files if detect_harness(f) != "pi"], mixed.parent / "other-agents.eval")
    print(log)
    print(samples_df(log)[["id", "model_usage"]].head() if "model_usage" in samples_df(log) else samples_df(log).head())
