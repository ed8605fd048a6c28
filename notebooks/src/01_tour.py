# %% [markdown]
# # 01 · A tour of pi_nb
#
# A coding agent works inside a fixed **context window**: everything the model reads in one
# request — the system prompt, the tool definitions, the conversation so far, every file it read
# and every command it ran — must fit in a budget of tokens. The Pi coding agent guards that
# window at three boundaries:
#
# 1. **tool output** — what a tool may put into the conversation (2,000 lines / 50 KB);
# 2. **the request** — what is sent with every call (system prompt, context files, skills, tools);
# 3. **history** — what is kept of earlier turns (a session tree, compaction, branch summaries).
#
# `pi_nb` reproduces those boundaries in Python, exactly as Pi 0.85.0 draws them, and lets you
# *look* at them. This notebook runs one real agent turn and then looks at the three things you
# will use in every other notebook: the **session tree**, the **token budget** and a **frame**.
#
# Everything here runs on pi_nb's **offline model**: a deterministic, rule-based stand-in for an
# LLM. It needs no API key and no network, and it is honest about what it is. It does call the
# real tools (with Pi's truncation) and it reports token usage counted with tiktoken over the exact
# request, so budgets and compaction behave as they would with a real model.

# %% [markdown]
# ## A throwaway project
#
# The agent needs a working directory. We make one in a temporary folder, and we point
# `PI_CODING_AGENT_DIR` (Pi's home for sessions, settings and trust decisions) at a folder next to
# it, so nothing this notebook does lands in your own `~/.pi`.

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-01-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
project = work / "project"
project.mkdir()
(project / "notes.txt").write_text(
    "Release checklist\n- run the tests\n- update the changelog\n- tag the release\n"
)
os.chdir(project)
print("project:", project)

# %% [markdown]
# ## Load the extension
#
# `%load_ext pi_nb` registers two magics: `%%pi` runs the cell as one agent turn, and `%pi ...`
# controls the session. Nothing notebook-related is imported before this line (`import pi_nb`
# alone is just the engine). `%pi help` lists every command.

# %%
%load_ext pi_nb

# %%
%pi help

# %% [markdown]
# ## A first agent turn
#
# The offline model follows simple rules: it reads the files you name, runs the commands you put
# in backticks, and then answers from what the tools returned. `seq 5000` prints 5,000 lines —
# more than Pi lets a tool put into the context. Watch the badge on the `bash` call: Pi keeps the
# **last** 2,000 lines of a command's output (the end is where errors are) and saves the full
# output to a temporary file, whose path the model is told.

# %%
%%pi
read notes.txt and run `seq 5000`

# %% [markdown]
# The cell returned a `TurnResult` (it is `_`, or `Out[n]`): the turn's messages, the entry ids
# it wrote, and the usage the model reported, summed over the turn's three model calls (one per
# tool call, one for the answer). Each call resends the whole conversation, so the last call is
# the biggest: its *input* is the size of the context, the number Pi compares with the window.

# %%
turn = _
print("the turn:", turn.usage)
for m in turn.messages:
    if m["role"] == "assistant":
        print(f"  one call: input {m['usage']['input']:>5}  output {m['usage']['output']:>3}  stop={m['stopReason']}")
bash_result = [m for m in turn.messages if m["role"] == "toolResult"][-1]
print("\n... the end of what the model saw of `seq 5000`:\n" + bash_result["content"][0]["text"][-120:])

# %% [markdown]
# ## The session is a file, in Pi's format
#
# Every message became an **entry** in a JSONL file in Pi's layout
# (`$PI_CODING_AGENT_DIR/sessions/--<cwd>--/<time>_<id>.jsonl`). The real Pi can open it, and
# pi_nb can open Pi's files. `%pi status` says where the session is.

# %%
status = %pi status
print(status)

# %%
import json

with open(turn.session_file, encoding="utf-8") as f:
    for line in f:
        entry = json.loads(line)
        role = entry.get("message", {}).get("role", "")
        print(f"{entry['type']:<22} {role:<11} id={entry['id'][:8]:<8} parent={str(entry.get('parentId'))[:8]}")

# %% [markdown]
# ## The tree
#
# Entries point at their parent, so a session is a **tree**: you can go back to any point and
# continue from there (notebook 05). The view marks the active path with a bar on the left and
# shows how many tokens each entry puts into the context. In JupyterLab the tree is a live widget
# (select an entry, navigate from it); everywhere else — an HTML export, GitHub — you see the same
# picture as static HTML.

# %%
%pi tree

# %% [markdown]
# ## The budget
#
# The budget bar shows what the **next** request would hold, by category, against the context
# window. The dashed line is Pi's compaction threshold, `contextWindow - reserveTokens`: when the
# context grows past it, Pi summarises older history (notebook 04). Measuring costs no tokens:
# the view reads the session, it never talks to the model.

# %%
%pi budget

# %% [markdown]
# Three token sources appear in pi_nb, always labelled: **usage** (what the provider reported —
# the only number Pi's threshold uses), Pi's **estimate** (characters / 4, for messages after the
# last usage), and **tiktoken** (an exact count, used for the categories above).

# %%
%pi settings

# %% [markdown]
# ## A frame
#
# For analysis, every session becomes pandas frames (notebook 06). `%pi entries` is one entry
# per row, with stable ids, the parent, the role, a text preview and whether the entry is on the
# active path.

# %%
entries = %pi entries
entries[["entry_id", "parent_id", "type", "role", "text", "depth", "on_active_branch"]]

# %% [markdown]
# `messages_df` adds token counts per message, `usage_df` one row per model call. Each `%pi`
# command is one call of the Python API: here we take the session the magics hold and call the
# frame functions ourselves.

# %%
from pi_nb.notebook import messages_df, usage_df

session = %pi session
messages_df(session.session_manager)[["entry_id", "role", "tool_name", "stop_reason", "estimate_tokens", "text"]]

# %%
usage_df(session.session_manager)[["entry_id", "stop_reason", "input", "output", "total_tokens", "context_tokens"]]

# %% [markdown]
# ## Where next
#
# * **02 · truncation** — the tool-output boundary up close: head vs tail, bytes vs lines,
#   a multibyte character at the cut.
# * **03 · the request** — context files, project trust, skills and the exact system prompt.
# * **04 · compaction** — shrink the window and watch Pi summarise.
# * **05 · branches** — navigate the tree, with and without a branch summary.
# * **06 · analysis** — frames and plots over a directory of sessions, including real Pi files.
