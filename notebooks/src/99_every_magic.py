# %% [markdown]
# # 99 · Every magic, every widget
#
# A reference notebook rather than a lesson: it uses every `%pi` command, every `%%pi` option and
# each of the three widgets once, on the offline model, so that CI can check that all of them
# run in a real kernel and draw something (`tests/test_notebooks.py`, `tests/test_screenshots.py`).
# The lessons are notebooks 01–06.

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-99-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
project = work / "project"
(project / "src").mkdir(parents=True)
(project / "notes.txt").write_text("Release checklist\n- run the tests\n- update the changelog\n- tag the release\n")
(project / "src" / "app.py").write_text("".join(f"def handler_{i}():\n    # TODO: validate input {i}\n    return {i}\n\n" for i in range(30)))
os.chdir(project)

# %%
%load_ext pi_nb
%config PiMagics.update_interval = 50

# %%
%pi help

# %%
%pi?

# %% [markdown]
# `%pi COMMAND --help` (or `%pi help COMMAND`) shows one command with every option and its meaning.
# A mistake in a magic's input is one line that says what is wrong and what to do, never a
# traceback; Tab completes commands, options, entry ids and labels, model specs and session paths.

# %%
%pi navigate --help

# %%
%%pi --help
with --help the cell body is not sent

# %% [markdown]
# ## Sessions: `new`, `status`, `list`, `open`

# %%
answer = %pi new
print(answer)
status = %pi status
print(status)

# %% [markdown]
# ## `%%pi` and its options

# %%
%%pi --thinking low --context-window 64000 --reserve 4000 --keep-recent 3000
read notes.txt and run `seq 3000`

# %%
%%pi --tools read,bash,grep,ls
search for "TODO" in src and list src

# %%
%%pi --no-tools
What can you do without tools?

# %%
fname = "notes.txt"
budget_note = {"owner": "docs team", "deadline": "Friday"}

# %%
%%pi --tools read,bash,edit,write --interpolate --vars budget_note
read {fname}

# %%
%%pi --cells 2
run `echo the previous two cells were included`

# %%
quiet = get_ipython().run_cell_magic("pi", "--no-render", "run `echo quiet`")
quiet

# %%
%%pi --model offline
run `wc -l notes.txt`

# %% [markdown]
# ## Model and settings

# %%
%pi model

# %%
answer = %pi model offline --context-window 32000 --max-tokens 2048
print(answer)
%pi settings keepRecentTokens=1000

# %%
%pi settings

# %% [markdown]
# `%pi models` lists the models pi_nb knows as a frame, with the variable that holds each provider's
# key and whether it is set (never its value). Choosing a model checks it at once: a missing SDK
# says which extra to install, a missing key which variable to set.

# %%
models = %pi models
models[["model", "context_window", "max_tokens", "key_env", "key_set"]].head()

# %%
%pi models anthropic

# %% [markdown]
# ## A turn that ends in an error
#
# A turn whose last answer is an error (the provider unreachable, a bad key, an overflow that
# compaction could not fix) shows `error` in its status line and fails its cell, so "Run All",
# `nbconvert --execute` and papermill stop there. `%%pi --no-raise` (or
# `%config PiMagics.raise_on_error = False`) keeps going; a scripted model plays the failing provider.

# %%
from pi_nb.providers import ScriptedModel, get_model

failing = ScriptedModel(id="unreachable", context_window=32000)
failing.enqueue(failing.error("Connection error."))
session_now = %pi session
session_now.set_model(failing)

# %%
%%pi --no-raise
this request will not get through

# %%
session_now.set_model(get_model("offline", context_window=32000))
print(_.error)

# %% [markdown]
# ## The three widgets, through the magics and directly
#
# `%pi tree` and `%pi budget` are `session_tree` and `token_budget` of the current session; the
# truncation view shows the cut of the `seq 3000` result from the first turn.

# %%
%pi tree

# %%
%pi budget

# %%
from pi_nb.notebook import session_tree, token_budget, tool_result_truncation, truncation_view

session = %pi session
sm = session.session_manager
bash_results = [e["message"] for e in sm.get_branch() if e["type"] == "message" and e["message"].get("toolName") == "bash"]
tool_result_truncation(bash_results[0])

# %%
truncation_view("héllo wörld\n" * 3000, "tail", max_bytes=2000)

# %%
session_tree(session.session_file)

# %%
token_budget(session.session_file, model_context_window=32000)

# %% [markdown]
# ## Context, entries, compaction

# %%
%pi context

# %%
entries = %pi entries
entries[["entry_id", "type", "role", "text"]].tail(5)

# %%
result = %pi compact Focus on the files that were read.
{k: result[k] for k in ("firstKeptEntryId", "tokensBefore", "estimatedTokensAfter")}

# %% [markdown]
# ## The tree: `navigate`, `label`

# %%
answers = [e["id"] for e in sm.get_branch() if e["type"] == "message" and e["message"]["role"] == "assistant" and e["message"]["stopReason"] == "stop"]
leaf = sm.get_leaf_id()
%pi navigate {answers[-2]}

# %%
%%pi
run `echo on a new branch`

# %%
result = %pi navigate {leaf} --summarize --instructions "One line only." --label back-again
print(result["summaryEntry"]["summary"][:300])

# %%
result = %pi navigate {answers[-2]} --summarize --replace --instructions "Write a haiku about this branch."
print(result["summaryEntry"]["summary"][:300])

# %%
answer = %pi label {answers[0]} first-answer
print(answer)
answer = %pi label {answers[0]}
print(answer)

# %% [markdown]
# ## Turns: show recorded turns again without calling the model

# %%
%pi turns

# %%
%pi turns 2

# %%
%pi turns all

# %% [markdown]
# ## Trust

# %%
(project / ".pi" / "skills" / "demo").mkdir(parents=True)
(project / ".pi" / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nSay hello.\n")
question = %pi trust
print(question)

# %%
answer = %pi trust once
print(answer)
answer = %pi trust once-no
print(answer)
answer = %pi trust parent
print(answer)

# %% [markdown]
# ## Finding and reopening sessions: `list`, `open`, `--session`

# %%
%pi list

# %%
path = session.session_file
answer = %pi open {path}
print(answer)
answer = %pi open --recent
print(answer)

# %%
%%pi --session {path}
read notes.txt

# %% [markdown]
# ## Following a live session: `follow`
#
# `%pi follow PATH` shows the tree, the budget and a log of the turns of a session that another
# process appends to (the real Pi in a terminal, another kernel), and `%pi follow --stop` ends it.

# %%
follower = %pi follow {path}
display(follower)

# %%
answer = %pi follow --stop
print(answer)

# %%
answer = %pi new --in-memory --cwd {project}
print(answer)

# %% [markdown]
# ## Signing in: `pi_nb.auth`
#
# Pi keeps API keys and OAuth sign-ins in the agent dir's `auth.json`, and pi_nb reads and
# writes the same file (refreshing tokens as Pi does), so one sign-in serves both. A sign-in with a
# device code shows the link and the code to enter, live in the cell. Here it runs against a
# local stand-in for GitHub (`pi_nb.auth.testing.FakeOAuthServer`, which approves the code at
# once), in this notebook's temporary agent dir. `%pi models` then says where each provider's
# credential comes from (never its value) and whether each model can run, and why not.

# %%
import pi_nb.auth
from pi_nb.auth.http import redirect_to
from pi_nb.auth.testing import FakeOAuthServer

with FakeOAuthServer(pending_polls=0) as github, redirect_to(github.url):
    %pi login github-copilot --wait
print(pi_nb.auth.credential_source("github-copilot"))

# %%
copilot = %pi models github-copilot
assert copilot["key_source"].str.startswith("auth.json (OAuth").all()
# signed in: a model is ready, or the one thing it still misses is its provider SDK (Binder has none)
assert copilot.loc[~copilot["ready"], "missing"].str.contains("package, which is not installed").all()
copilot[["model", "api", "key_source", "ready", "missing"]].head(3)

# %%
answer = %pi logout github-copilot
print(answer)
print(pi_nb.auth.credential_source("github-copilot"))
