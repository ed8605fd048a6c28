# %% [markdown]
# # 03 · The request: context files, trust, skills, the system prompt
#
# Every call to the model carries more than the conversation. Pi assembles a **system prompt**
# from several sources, and each of them costs tokens in *every* request of the session:
#
# * **context files** — `AGENTS.md` / `CLAUDE.md` instructions: one global file from Pi's agent
#   directory, then one per directory from the filesystem root down to the working directory;
# * **append prompts** — `APPEND_SYSTEM.md`, added after the base prompt;
# * **skills** — only their *name, description and location* are listed; the model loads a
#   skill's instructions on demand, when a task matches;
# * the **tool** snippets and guidelines of the active tools.
#
# Some of these come from the project itself (`.pi/` in the working directory), and a project you
# just cloned should not be able to rewrite your agent's instructions. So Pi asks before it
# **trusts** a project folder. This notebook builds a small layout with every kind of source and
# watches the request change as the project is refused and then trusted.

# %% [markdown]
# ## The layout
#
# ```
# agent/                      PI_CODING_AGENT_DIR (global: never gated by trust)
#   AGENTS.md                   global instructions
#   APPEND_SYSTEM.md            global append prompt
#   skills/changelog/SKILL.md   a user skill
# repo/
#   CLAUDE.md                   the parent folder's instructions
#   service/                    the working directory
#     AGENTS.md                 ... shadowed by AGENTS.override.md in the same folder
#     AGENTS.override.md
#     .pi/APPEND_SYSTEM.md      the project's append prompt   (needs trust)
#     .pi/skills/release/       a project skill               (needs trust)
# ```

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-03-"))
agent = work / "agent"
os.environ["PI_CODING_AGENT_DIR"] = str(agent)
repo = work / "repo"
cwd = repo / "service"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


write(agent / "AGENTS.md", "# Global\nWrite British English.\n")
write(agent / "APPEND_SYSTEM.md", "Global append: keep answers short.")
write(
    agent / "skills" / "changelog" / "SKILL.md",
    "---\nname: changelog\ndescription: Update CHANGELOG.md in Keep a Changelog format.\n---\n"
    "Add an entry under Unreleased. Group by Added / Changed / Fixed.\n",
)
write(repo / "CLAUDE.md", "# Repo\nAll services use Python 3.11.\n")
write(cwd / "AGENTS.md", "# Service\nRun `make test` before committing.\n")
write(cwd / "AGENTS.override.md", "# Service (override)\nThis week: run `make test-fast` instead.\n")
write(cwd / ".pi" / "APPEND_SYSTEM.md", "Project append: mention the ticket number in every answer.")
write(
    cwd / ".pi" / "skills" / "release" / "SKILL.md",
    "---\nname: release\ndescription: Cut a release of this service (version bump, tag, notes).\n---\n"
    "1. Bump the version in pyproject.toml.\n2. Run the tests with make test.\n3. Tag the commit vX.Y.Z and push the tag.\n"
    "4. Paste the CHANGELOG section into the release notes.\n",
)
write(cwd / "notes.txt", "ticket PI-42: add a health check\n")
os.chdir(cwd)
for p in sorted(work.rglob("*")):
    if p.is_file():
        print(p.relative_to(work))

# %% [markdown]
# ## Context files: global first, then root → cwd, one per folder
#
# `load_project_context_files` is Pi's `loadProjectContextFiles`. In each folder the first of
# `AGENTS.override.md`, `AGENTS.md`, `AGENTS.MD`, `CLAUDE.md`, `CLAUDE.MD` that exists wins — so
# `service/AGENTS.md` is not loaded at all. Parents come before children, and the global file
# comes first: later (more specific) instructions get the last word. Context files are **not**
# gated by trust: a cloned repository's `AGENTS.md` is read either way.

# %%
import pandas as pd
import pi_nb

files = pi_nb.load_project_context_files(str(cwd), str(agent))
pd.DataFrame([{"path": str(pathlib.Path(f.path).relative_to(work)), "first line": f.content.splitlines()[1]} for f in files])

# %% [markdown]
# ## A project that needs trust
#
# The working directory has a `.pi/` folder with skills and an append prompt: resources that
# could change what the agent does. Pi's default (`defaultProjectTrust: "ask"`) is to ask, and
# until the question is answered the project is **not** trusted. In a notebook the question
# cannot block, so the magics keep it pending: `%pi trust` shows it.

# %%
print("trust-requiring resources:", pi_nb.has_trust_requiring_project_resources(str(cwd)))

# %%
%load_ext pi_nb

# %%
answer = %pi new
print(answer)
question = %pi trust
print(question)

# %% [markdown]
# What the untrusted session sends: the context files (they are not gated), the *global* append
# prompt and skills list — the project's `.pi/` is ignored. `system_prompt_parts()` splits the
# system prompt into those sources; `%pi budget` draws them.

# %%
magics = get_ipython().magics_manager.registry["PiMagics"]


def sources(session):
    parts = session.system_prompt_parts()
    skills = [s.name for s in session.resource_loader.get_skills().skills]
    return {
        "context files": [str(pathlib.Path(f.path).relative_to(work)) for f in session.resource_loader.get_agents_files()],
        "append": parts.get("append"),
        "skills": skills,
        "system prompt tokens": pi_nb.count_tokens(session.system_prompt),
    }


sources(magics.session)

# %% [markdown]
# Refuse it: the answer is saved in `trust.json` in the agent directory (keyed by the real path
# of the folder), so Pi will not ask again for this folder or the folders below it.

# %%
answer = %pi trust no
print(answer)
print((agent / "trust.json").read_text())

# %% [markdown]
# Now trust it. The session reloads its resources: the project's skill joins the list, and the
# project's `APPEND_SYSTEM.md` *replaces* the global one (Pi takes **one** append file: the
# project's when trusted, else the global one).

# %%
answer = %pi trust yes
print(answer)
print((agent / "trust.json").read_text())
sources(magics.session)

# %% [markdown]
# The budget bar splits the system prompt into those sources. With the default 128,000-token
# window they are a sliver, so for a moment we pretend the model has a 4,000-token window (and
# reserve 1,000 tokens for the answer): `%pi settings` and `%pi model` change the session's compaction
# settings and model (the reserve first: a window that is not above the reserve is refused).

# %%
%pi settings reserveTokens=1000
%pi model offline --context-window 4000
%pi budget

# %% [markdown]
# Back to the real window:

# %%
%pi model offline
%pi settings reserveTokens=16384

# %% [markdown]
# ## Skills: listed up front, loaded on demand
#
# A skill costs a few tokens per request — its name, description and file path in an
# `<available_skills>` block — and its instructions are read only when needed. Here is the block
# exactly as it appears in the system prompt:

# %%
print(magics.session.system_prompt_parts()["skills list"])

# %% [markdown]
# The model can load a skill with the `read` tool when a task matches its description…

# %%
%%pi
read .pi/skills/release/SKILL.md

# %% [markdown]
# … or you can load it yourself: a prompt that starts with `/skill:name` is expanded before it is
# sent into a `<skill>` block with the skill's body (frontmatter removed) and the rest of your
# message after it. The offline model then acts on what follows.

# %%
%%pi
/skill:release read notes.txt

# %%
sent = [m for m in magics.session.messages if m["role"] == "user"][-1]  # what the model received
print(sent["content"][0]["text"] if isinstance(sent["content"], list) else sent["content"])

# %% [markdown]
# ## The exact system prompt
#
# Everything above, assembled in Pi's order: the base prompt (pi_nb's own words, Pi's
# structure), the tools and guidelines, the append prompt, the `<project_context>` block with
# each context file, the skills list, and the working directory on the last line.

# %%
print(magics.session.system_prompt)

# %% [markdown]
# `%pi context` shows the whole request the next call would send — system prompt, every message
# as the model receives it, and the tool schemas — with a token count for each part. Nothing is
# sent.

# %%
%pi context
