# %% [markdown]
# # 04 · Compaction
#
# Truncation keeps any *one* tool result small; it does nothing about a conversation that keeps
# growing. When the context no longer fits, Pi **compacts**: it asks the model to summarise the
# older part of the conversation, writes the summary into the session as a `compaction` entry,
# and from then on sends *summary + recent messages* instead of the whole history. The rules:
#
# * **when** — the context exceeds `contextWindow − reserveTokens` (the reserve, 16,384 tokens by
#   default, is room for the model's answer). Pi checks at three points: after a run, before a new
#   prompt, and between two turns inside one run;
# * **what is kept** — the newest messages worth at least `keepRecentTokens` (20,000 by default),
#   cut at a message where a conversation can resume; when the cut lands inside a turn, that turn
#   is **split** and its beginning is summarised separately;
# * **the summary** — a fixed template (Goal, Constraints, Progress, Key Decisions, Next Steps,
#   Critical Context, plus the files read and modified). The next compaction does not start from
#   scratch: it **updates** the previous summary with what happened since.
#
# A real window of 128,000 tokens takes a long session to fill, so this notebook shrinks it to
# 6,000. The offline model writes the summaries (from the conversation, following the template's
# headings), and its reported usage drives the same thresholds a real model's would.

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-04-"))
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
os.chdir(project)

# %%
%load_ext pi_nb

# %% [markdown]
# ## A small window
#
# A 6,000-token window with a 1,500-token reserve: Pi compacts once the context passes
# **4,500** tokens, and keeps at least 1,500 tokens of recent messages.

# %%
%pi settings reserveTokens=1500 keepRecentTokens=1500
%pi model offline --context-window 6000

# %%
%%pi
read notes.txt and run `seq 200 | tail -n 40`

# %%
%pi budget

# %% [markdown]
# ## Filling it up
#
# Three more requests, without drawing each turn (`--no-render`). After each one we print the
# context size Pi would use for its decision: the usage of the last response, plus Pi's chars/4
# estimate of anything that came after it.

# %%
ip = get_ipython()
magics = ip.magics_manager.registry["PiMagics"]
session = magics.session


def context_size():
    usage = session.get_context_usage()
    return f"context {usage['tokens']:>5,} tokens · threshold {usage['threshold']:,}"


for prompt in ["read src/app.py lines 1-120", "read server.log lines 1-60", "read src/app.py lines 121-240"]:
    ip.run_cell_magic("pi", "--no-render", prompt)
    print(f"{prompt:<32} {context_size()}")

# %%
%pi budget

# %% [markdown]
# ## Where Pi would cut — before it does
#
# `prepare_compaction` is the pure first half of compaction: given the branch and the settings it
# finds the cut point and collects what would be summarised. It walks back from the newest entry
# adding up Pi's estimate until `keepRecentTokens` is reached, then moves to the nearest entry a
# conversation can resume from (a user or assistant message — never a tool result, which needs
# the tool call before it).

# %%
import pandas as pd
import pi_nb

branch = session.session_manager.get_branch()
prep = pi_nb.prepare_compaction(branch, session.settings.get_compaction_settings())
print("first kept entry:", prep.first_kept_entry_id)
print("split turn:      ", prep.is_split_turn)
print("tokens before:   ", prep.tokens_before)
print("to summarise:    ", len(prep.messages_to_summarize), "messages, plus", len(prep.turn_prefix_messages), "from the split turn")

# %% [markdown]
# The branch, entry by entry, with what would happen to each. When the cut falls *inside* a turn
# (a user message and everything the agent did for it), the entries of that turn before the cut
# go into a separate **turn-prefix** summary, and the rest of the turn is kept word for word.
# (This is a preview: the real compaction below happens one request later, so its cut moves on.)

# %%
ids = [e["id"] for e in branch]
cut = ids.index(prep.first_kept_entry_id)
turn_start = pi_nb.find_turn_start_index(branch, cut) if prep.is_split_turn else cut
rows = []
for i, e in enumerate(branch):
    msg = e.get("message", {})
    text = msg.get("content", "")
    text = text if isinstance(text, str) else " ".join(b.get("text", b.get("name", "")) for b in text)
    fate = "kept" if i >= cut else ("turn prefix" if i >= turn_start else "summarised")
    rows.append({"entry": e["id"], "type": e["type"], "role": msg.get("role", ""), "estimate": sum(pi_nb.estimate_tokens(m) for m in pi_nb.session_entry_to_context_messages(e)), "fate": fate, "text": text[:60]})
pd.DataFrame(rows)

# %% [markdown]
# ## Crossing the threshold
#
# One more read puts the context over 4,500 tokens. Pi notices **between two turns** of this
# very request — after the tool result, before asking the model to go on — compacts, and
# continues with the compacted context. The turn view marks the moment.

# %%
%%pi
read server.log lines 61-120

# %%
turn = _
outcome = turn.compactions[0]
print(outcome["reason"], "·", outcome["status"])
print("tokens before:", outcome["result"]["tokensBefore"], "→ estimated after:", outcome["result"]["estimatedTokensAfter"])

# %% [markdown]
# ## The compaction entry and its summary
#
# The summary is an entry in the tree like any other: its parent is the entry before it, and
# `firstKeptEntryId` points at the first entry that is still sent in full. The old entries stay
# in the file — you can still read them, navigate to them, analyse them — they are just no
# longer sent.

# %%
from pi_nb.notebook import compactions_df

compactions_df(session.session_manager)[["entry_id", "tokens_before", "first_kept_entry_id", "summary_estimate_tokens", "estimate_tokens_after", "read_files"]]

# %%
first_summary = compactions_df(session.session_manager)["summary"].iloc[0]
print(first_summary)

# %% [markdown]
# The `---` / **Turn Context (split turn)** part is the turn-prefix summary: the beginning of the
# turn that was cut in two. What the model receives next is the summary, wrapped as a user
# message, followed by the kept messages:

# %%
context = session.session_manager.build_session_context()
for m in pi_nb.convert_to_llm(context.messages)[:3]:
    text = m["content"] if isinstance(m["content"], str) else " ".join(b.get("text", b.get("name", "")) for b in m["content"])
    print(f"[{m['role']}] {text[:160]!r}\n")

# %%
%pi tree

# %% [markdown]
# ## The incremental summary
#
# Two more turns, then a manual compaction with extra instructions (`/compact` in Pi). This time
# there *is* a previous summary: Pi sends it in `<previous-summary>` tags together with the new
# messages, and the model is told to update it — keep what still holds, move finished work to
# Done, add the new files. The offline model merges the old items with the new ones.

# %%
for prompt in ["run `grep -c TODO src/app.py`", "read notes.txt"]:
    ip.run_cell_magic("pi", "--no-render", prompt)
    print(f"{prompt:<32} {context_size()}")

# %%
result = %pi compact Keep the file names.
{k: result[k] for k in ("firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "details")}

# %%
import difflib

second_summary = compactions_df(session.session_manager)["summary"].iloc[-1]
for line in difflib.unified_diff(first_summary.splitlines(), second_summary.splitlines(), "first summary", "second summary", lineterm="", n=0):
    print(line)

# %% [markdown]
# ## Tokens before and after
#
# The context size at every response of the active branch (provider usage), against the window
# and the threshold. Each compaction drops the context back to summary + kept messages; the
# session keeps going in a window that would otherwise have overflowed long ago.

# %%
from pi_nb.notebook import plot_context_tokens

plot_context_tokens(session.session_manager, context_window=6000, reserve_tokens=1500)

# %%
%%pi
run `wc -l notes.txt`

# %%
%pi budget
