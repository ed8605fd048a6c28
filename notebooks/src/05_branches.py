# %% [markdown]
# # 05 · Branches
#
# Every entry of a Pi session points at its parent, so a session is a **tree**, and the
# conversation the model sees is one **path** through it: from the root to the current *leaf*.
# Going back to an earlier entry and continuing from there starts a new branch. The entries of
# the old branch stay in the file, but they leave the context: the model no longer sees them.
#
# That is often the point (a failed attempt should not distract the model), but sometimes the
# detour taught something. So when you navigate with Pi's `/tree`, Pi can **summarise the branch
# you are leaving**: it collects the entries from the old leaf up to the **common ancestor** of
# the old leaf and the target (the last entry both paths share), asks the model for a summary,
# and writes it as a `branch_summary` entry at the target — where the model will read it.
#
# This notebook builds a small tree, navigates with and without a summary, and looks at what the
# model sees afterwards.

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-05-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
project = work / "project"
project.mkdir()
(project / "notes.txt").write_text("Release checklist\n- run the tests\n- update the changelog\n- tag the release\n")
(project / "server.log").write_text(
    "".join(f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO request {i} served in {i * 7 % 97} ms\n" for i in range(3000))
)
os.chdir(project)

# %%
%load_ext pi_nb

# %% [markdown]
# ## One straight line
#
# Three turns. Each is a user message, the assistant's tool call, the tool result and the answer.

# %%
ip = get_ipython()
for prompt in ["read notes.txt", "run `wc -l server.log`", "run `tail -n 3 server.log`"]:
    turn = ip.run_cell_magic("pi", "--no-render", prompt)
    print(f"{prompt:<28} → {turn.text.splitlines()[2][:70]}")

# %%
%pi tree

# %% [markdown]
# We will come back to the end of the first turn — its final answer — twice. The entry ids are
# random (8 hex digits, as in Pi), so we look them up. `%pi` line magics expand `{name}` from
# the notebook's variables.

# %%
session = %pi session
sm = session.session_manager
answers = [e["id"] for e in sm.get_branch() if e["type"] == "message" and e["message"]["role"] == "assistant" and e["message"]["stopReason"] == "stop"]
first_answer, last_leaf = answers[0], sm.get_leaf_id()
print("end of the first turn:", first_answer, "· current leaf:", last_leaf)

# %% [markdown]
# ## Navigate without a summary
#
# Moving the leaf to `first_answer` drops turns 2 and 3 from the context — nothing is deleted,
# and nothing is sent to the model. The next prompt then starts a second branch there.

# %%
result = %pi navigate {first_answer}
print(result, "· leaf now", sm.get_leaf_id())
print(len(session.messages), "messages in the context")

# %%
%%pi
run `head -n 2 server.log`

# %%
%pi tree

# %% [markdown]
# The first answer is now a **branch point** with two children. Each branch is one possible
# conversation; only the one with the leaf is sent.

# %% [markdown]
# ## What a summary would cover: the common ancestor
#
# Suppose we go back to the *old* branch — its last answer, `last_leaf`. Leaving the current branch
# abandons everything on it below the point where the two paths meet. That point is the
# common ancestor, and `collect_entries_for_branch_summary` is Pi's function that finds it and
# collects what lies between:

# %%
import pi_nb

old_leaf = sm.get_leaf_id()
collected = pi_nb.collect_entries_for_branch_summary(sm, old_leaf, last_leaf)
print("common ancestor:", collected.common_ancestor_id, "(= first_answer)" if collected.common_ancestor_id == first_answer else "")
for e in collected.entries:
    m = e.get("message", {})
    print(" ", e["id"], e["type"], m.get("role", ""))

# %% [markdown]
# ## Navigate with a summary
#
# `--summarize` asks the model to summarise those entries (Pi's branch-summary prompt: Goal,
# Constraints, Progress, Key Decisions, Next Steps) and writes a `branch_summary` entry as a
# child of the target. Its `fromId` remembers where we came from. `--label` puts a label on it,
# as `/tree` does.

# %%
result = %pi navigate {last_leaf} --summarize --label tried-head
summary_entry = result["summaryEntry"]
print({k: v for k, v in summary_entry.items() if k != "summary"})
print()
print(summary_entry["summary"])

# %%
%pi tree

# %% [markdown]
# ## What the model sees afterwards
#
# The context is the path from the root to the new leaf (the summary entry): the three turns of
# the old branch, then the summary — turned into a user message by `convert_to_llm`, with Pi's
# fixed preamble, so the model knows it came back from somewhere else. The abandoned
# `head -n 2` turn itself is not sent.

# %%
llm = pi_nb.convert_to_llm(session.messages)
print(len(llm), "messages; the last one:\n")
print(llm[-1]["content"][0]["text"])

# %%
%pi context

# %% [markdown]
# ## Navigating to a user message
#
# Going to a **user** message is "edit that prompt": Pi moves the leaf to the message's
# *parent* and hands the text back (`editorText`) so it can be changed and sent again. Here we go
# back to the prompt of the second turn:

# %%
second_prompt = [e["id"] for e in sm.get_branch() if e["type"] == "message" and e["message"]["role"] == "user"][1]
result = %pi navigate {second_prompt}
print(result, "· leaf:", sm.get_leaf_id(), "= first_answer:", sm.get_leaf_id() == first_answer)

# %% [markdown]
# ## Labels
#
# Labels are entries too (`label`), so they are recorded in the file; the tree shows the latest
# label of each entry.

# %%
answer = %pi label {first_answer} checkpoint
print(answer)
%pi tree
