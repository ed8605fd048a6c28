# %% [markdown]
# # 06 · Analysis: frames and plots over many sessions
#
# A Pi session file is a complete record of what the agent saw and did: every request's usage,
# every tool result with its truncation numbers, every compaction with its token counts. Read in
# bulk, those files answer questions about context policies — how close do sessions run to the
# threshold, which tools get cut and by how much, what compaction buys.
#
# pi_nb turns sessions into pandas frames in the style of Inspect AI's: one row per entry,
# message, tool result, model call or compaction, with stable id columns (`session_id`,
# `entry_id`, `parent_id`) to join them. A source can be one session, a file, a **directory**
# (searched recursively for `*.jsonl`) or a list of those — Pi's own files load unchanged.
#
# This notebook analyses two kinds of sessions side by side:
#
# * **sessions recorded with the real Pi 0.85.0** (`data/real-pi/`, shipped with pi_nb; see
#   `data/README.md` for how they were made);
# * a few sessions pi_nb runs right here, on the offline model, into a directory in Pi's layout.

# %%
import os
import pathlib
import tempfile

DATA = pathlib.Path("data/real-pi").resolve()  # relative to this notebook's folder
work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-06-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
project = work / "project"
(project / "src").mkdir(parents=True)
(project / "notes.txt").write_text("Release checklist\n- run the tests\n- update the changelog\n- tag the release\n")
(project / "src" / "app.py").write_text(
    "".join(f"def handler_{i}():\n    # TODO: validate input {i}\n    return {i}\n\n" for i in range(70))
)
(project / "server.log").write_text(
    "".join(f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO request {i} served in {i * 7 % 97} ms\n" for i in range(3000))
)
sorted(p.name for p in DATA.glob("*.jsonl"))

# %% [markdown]
# ## A directory of pi_nb sessions
#
# Three short sessions through the Python API (no magics): an `AgentSession` over a
# `SessionManager` that writes to `sessions/`, each with its own task list. The third one runs in
# a 6,000-token window so that it compacts. `await` works at the top level of a notebook cell.

# %%
import pi_nb
from pi_nb.resources.settings import SettingsManager

sessions_dir = work / "sessions"
tasks = {
    "explore": ["list .", "read notes.txt", "read server.log"],
    "search": ['search for "TODO" in src', "run `grep -c TODO src/app.py`"],
    "long": [
        "read src/app.py lines 1-120",
        "read server.log lines 1-60",
        "read src/app.py lines 121-240",
        "read server.log lines 61-120",
        "read notes.txt",
    ],
}
for name, prompts in tasks.items():
    settings = SettingsManager.create(str(project))
    window = 6000 if name == "long" else 128_000
    if name == "long":
        settings.apply_overrides({"compaction": {"reserveTokens": 1500, "keepRecentTokens": 1500}})
    session = pi_nb.AgentSession(
        pi_nb.SessionManager.create(str(project), str(sessions_dir)),
        pi_nb.OfflineModel(context_window=window),
        settings=settings,
        active_tools=["read", "bash", "grep", "ls"],
    )
    session.session_manager.append_session_info(name)
    for prompt in prompts:
        await session.prompt(prompt)
    print(f"{name:<8} {len(session.session_manager.get_entries()):>3} entries → {pathlib.Path(session.session_file).name}")

# %% [markdown]
# ## Entries: one row per entry
#
# `entries_df` takes both directories at once. Each row has the session and entry ids, the type,
# the role of a message, a text preview, the depth in the tree, the number of children, and
# whether the entry is on the active branch and in the context (after compaction, old entries are
# on the branch but no longer in the context).

# %%
import pandas as pd
from pi_nb.notebook import compactions_df, entries_df, messages_df, tool_results_df, usage_df

sources = [DATA, sessions_dir]
entries = entries_df(sources)

# a readable name per session: who wrote it, and the name in its session_info entry
info = entries[entries["type"] == "session_info"].set_index("session_id")
who = {sid: "real Pi" if pathlib.Path(f).parent == DATA else "pi_nb" for sid, f in zip(entries["session_id"], entries["session_file"])}
names = {sid: f"{who[sid]} · {info['text'].get(sid, '?')}" for sid in who}
entries["session"] = entries["session_id"].map(names)
pd.crosstab(entries["session"], entries["type"])

# %%
entries.groupby("session")[["on_active_branch", "in_context"]].sum().join(entries.groupby("session").size().rename("entries"))

# %% [markdown]
# ## Messages and model calls
#
# `messages_df` has one row per message with Pi's token estimate; `usage_df` one row per
# assistant response with what the provider reported. `context_tokens` is Pi's
# `calculateContextTokens(usage)` — the number that is compared with the threshold.

# %%
messages = messages_df(sources)
messages["session"] = messages["session_id"].map(names)
messages.pivot_table(index="session", columns="role", values="estimate_tokens", aggfunc="sum", fill_value=0)

# %%
usage = usage_df(sources)
usage["session"] = usage["session_id"].map(names)
usage.groupby(["session", "provider", "model"]).agg(calls=("entry_id", "size"), max_context=("context_tokens", "max"), output=("output", "sum"))

# %% [markdown]
# ## Tool results and their truncation
#
# `tool_results_df` carries the fields Pi stored in each result's `details`: whether and how it
# was cut, lines and bytes before and after, the full-output file of `bash`, grep's match limit.
# How often was each tool cut, and what share of the bytes did the model see? (Pi stores the
# byte counts only for results it cut, so tools that were never cut show no share.)

# %%
results = tool_results_df(sources)
summary = results.groupby("tool_name").agg(
    results=("entry_id", "size"),
    truncated=("truncated", "sum"),
    by_lines=("truncated_by", lambda s: (s == "lines").sum()),
    by_bytes=("truncated_by", lambda s: (s == "bytes").sum()),
    bytes_seen=("output_bytes", "sum"),
    bytes_total=("total_bytes", "sum"),
)
summary["share seen"] = (summary["bytes_seen"] / summary["bytes_total"]).round(3)
summary

# %% [markdown]
# ## Compactions
#
# One row per `compaction` entry: the context size before (Pi's estimate at the time), the
# estimate of what was left after (the summary plus the kept messages), the summary's own size,
# and the files it lists. The real Pi and pi_nb each compacted their 6,000-token sessions.

# %%
compactions = compactions_df(sources)
compactions["session"] = compactions["session_id"].map(names)
compactions[["session", "tokens_before", "estimate_tokens_after", "summary_estimate_tokens", "first_kept_entry_id", "read_files"]]

# %% [markdown]
# ## Plots
#
# Every plot takes the same sources as the frames and returns a matplotlib figure (it needs no
# pyplot state, and exports as a static PNG). First the real Pi's compaction session: the context
# at each response against the window and the threshold, with the two compactions marked.

# %%
from pi_nb.notebook import plot_context_tokens, plot_token_composition, plot_truncation

plot_context_tokens(DATA / "compaction.jsonl", context_window=6000, reserve_tokens=1500, title="real Pi: compaction.jsonl")

# %% [markdown]
# What the context was made of at each response (tiktoken, by category) — the tool results of
# `tools.jsonl` dominate as soon as the 50 KB read arrives:

# %%
plot_token_composition(DATA / "tools.jsonl", title="real Pi: tools.jsonl")

# %% [markdown]
# And the truncation of every tool result in both directories:

# %%
plot_truncation(sources)

# %% [markdown]
# ## The views work on Pi's files too
#
# The session tree of the real Pi's branching session — its `branch_summary`, its labels and its
# three leaves — and the truncation of a stored `bash` result. Its full-output file lived in the
# recording machine's `/tmp`: where it is gone, the view shows the numbers Pi stored and says so.

# %%
from pi_nb.notebook import session_tree, token_budget, tool_result_truncation

session_tree(DATA / "branches.jsonl")

# %%
stored = [
    e
    for e in pi_nb.load_entries_from_file(str(DATA / "tools.jsonl"))
    if e.get("type") == "message" and e["message"].get("role") == "toolResult" and e["message"].get("toolName") == "bash"
]
tool_result_truncation(stored[0])

# %%
token_budget(DATA / "compaction.jsonl", model_context_window=6000, reserve_tokens=1500, keep_recent_tokens=1500)
