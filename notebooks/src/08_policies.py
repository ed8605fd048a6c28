# %% [markdown]
# # 08 · Context policies side by side: what each sends, what it costs
#
# Notebook 07 re-decided *Pi's* compaction over a recorded session. Here Pi's rule is one
# **policy value** among others (`pi_nb.policies`), each with its source in its docstring:
#
# | policy | what it does | source |
# | --- | --- | --- |
# | `PiPolicy` | Pi 0.85.0's automatic compaction (summary + kept recent part) | Pi itself |
# | `ObservationMasking` | tool outputs older than the last M steps become a placeholder | SWE-agent; *The Complexity Trap* (arXiv 2508.21433) |
# | `TrimLastTurns` / `TrimLastTokens` | send only the last N turns / T tokens | OpenAI Agents SDK session trimming |
# | `InspectTrim` | at 90 % of the window drop the oldest 20 % of messages (for good) | Inspect AI `CompactionTrim` |
# | `ClaudeCodeAutoCompact` | near the window, the whole history becomes one summary | Claude Code auto-compact |
# | `CodexTruncation` | each tool output cut to head + tail (10 KiB / 256 lines) | Codex CLI |
# | `ClearToolUses` | over a trigger, old tool results cleared server-side | Anthropic context editing |
#
# The conversation is what was recorded (same prompts, answers, tool results); what changes is
# the context each request carries, and so the bill. Sizes are Pi's chars/4 estimate calibrated
# on the recording's own usage (for the recorded policy they *are* the recorded sizes). The
# sessions are the real Pi 0.85.0 recordings in `data/real-pi/`; no network, no key.

# %%
import os
import pathlib
import tempfile

import matplotlib.pyplot as plt
import pandas as pd

from pi_nb.policies import (
    RECORDED,
    ClaudeCodeAutoCompact,
    ClearToolUses,
    CodexTruncation,
    InspectTrim,
    KeepAll,
    ObservationMasking,
    PiPolicy,
    TrimLastTokens,
    TrimLastTurns,
    policy_cost,
    replay_policy,
    sweep_policies,
)
from pi_nb.providers.catalog import find_model

DATA = pathlib.Path("data/real-pi").resolve()  # relative to this notebook's folder
work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-08-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
SESSION = DATA / "compaction.jsonl"
WINDOW = 6000  # the window compaction.jsonl was recorded on (reserve 1,500, keep 1,500)
SONNET = find_model("anthropic", "claude-sonnet-4-5")  # prices to bill the offline recording at
print(SONNET.cost)

# %% [markdown]
# ## 1. The recorded policy, replayed, sends the recorded requests
#
# `PiPolicy` runs the same decision (`decide`) and the same cut (`prepare_compaction`) as the live
# agent, through `pi_nb.what_if.replay`. With the recording's own settings every request has
# exactly the size the provider reported, up to the user's manual `/compact` (a manual compaction
# is not a decision of the policy, so the replay does not make it; after it the recorded history
# is shorter than the replayed one).

# %%
recorded = replay_policy(SESSION, RECORDED, context_window=WINDOW)
pi_same = replay_policy(
    SESSION, PiPolicy(reserve_tokens=1500, keep_recent_tokens=1500), context_window=WINDOW
)
diff = [a.tokens - b.tokens for a, b in zip(pi_same.requests, recorded.requests)]
same = next((i for i, d in enumerate(diff) if d != 0), len(diff))
manual = [c for c in pi_same.pi.recorded_compactions if c.reason == "manual"]
print(f"{len(recorded.requests)} requests; the same size as recorded: the first {same}")
print(
    f"the user's /compact came after entry {manual[0].after_entry_id}; request {same} is the first after it"
)
print(
    f"replayed compactions: {len(pi_same.events)}, recorded (automatic + manual): {len(pi_same.pi.recorded_compactions)}"
)

# %% [markdown]
# ## 2. Eight policies on one session
#
# One row per policy: how many requests, how many rewrites of the history (compactions, trims),
# the largest and the total prompt.

# %%
POLICIES = [
    KeepAll(),
    PiPolicy(reserve_tokens=1500, keep_recent_tokens=1500),
    ObservationMasking(keep_turns=3),
    TrimLastTurns(turns=2),
    TrimLastTokens(tokens=3000),
    InspectTrim(),
    ClaudeCodeAutoCompact(),
    CodexTruncation(max_lines=40),
    ClearToolUses(trigger=3000, keep=2),
]
replays = {p.name: replay_policy(SESSION, p, context_window=WINDOW) for p in POLICIES}
replays["recorded"] = recorded
outcomes = pd.DataFrame([r.outcome() for r in replays.values()]).set_index("policy")
outcomes[["requests", "rewrites", "compactions", "peak_tokens", "prompt_tokens", "over_window"]]

# %%
fig, ax = plt.subplots(figsize=(10, 4.5))
for name, r in replays.items():
    style = dict(color="black", linestyle="--", linewidth=2) if name == "recorded" else {}
    ax.plot([q.index for q in r.requests], [q.tokens for q in r.requests], marker=".", label=name, **style)
ax.axhline(WINDOW, color="red", linewidth=1, label=f"context window ({WINDOW:,})")
ax.set_xlabel("request (one per recorded answer)")
ax.set_ylabel("prompt size (tokens, calibrated estimate)")
ax.set_title(f"Prompt size per request, {SESSION.name}")
ax.legend(fontsize=8, ncol=2)
plt.show()

# %% [markdown]
# ## 3. Compactions and trims side by side
#
# Where each policy rewrote the kept history (before which request), and why: a compaction is a
# model call (billed below), a trim is not. Masking, clearing and truncation never rewrite the
# history: they change each request's view of it.

# %%
events = pd.DataFrame(
    [
        {
            "policy": name,
            "checkpoint": e.checkpoint,
            "before_request": e.before_request,
            "kind": e.kind,
            "tokens_before": e.tokens_before,
            "tokens_after": e.tokens_after,
        }
        for name, r in replays.items()
        for e in r.events
    ]
)
events

# %%
fig, ax = plt.subplots(figsize=(10, 3.5))
names = [n for n in replays if n != "recorded"]
markers = {"compaction": "v", "trim": "x"}
for kind, marker in markers.items():
    sub = events[events["kind"] == kind] if len(events) else events
    ax.scatter(
        sub["before_request"], [names.index(p) for p in sub["policy"]], marker=marker, s=60, label=kind
    )
ax.set_yticks(range(len(names)), names)
ax.set_xlim(-0.5, len(recorded.requests) - 0.5)
ax.set_xlabel("before request")
ax.set_title("History rewrites per policy")
ax.legend(title="rewrite")
plt.show()

# %% [markdown]
# ## 4. What it costs, as the provider bills it
#
# `policy_cost` prices each request with the catalog's prices (`calculate_cost`), after a cache
# model splits its prompt into uncached input, cache read and cache write. With `cache="auto"`
# the recording decides: this offline recording shows no cache reads, so nothing is cached. To
# see the cache at work, the same requests are also billed with Anthropic's prefix cache (pi-ai's
# breakpoints: system prompt, last tool, last user message; 5-minute TTL): a compaction, a trim, a
# newly masked or cleared message change the prefix from the first changed message on.

# %%
rows = []
for name, r in replays.items():
    for cache in ("none", "anthropic"):
        c = policy_cost(r, cache=cache, prices=SONNET)
        rows.append(
            {
                "policy": name,
                "cache": cache,
                **{
                    k: c.row()[k]
                    for k in (
                        "requests_cost",
                        "summaries_cost",
                        "total_cost",
                        "cache_read_tokens",
                        "cache_write_tokens",
                        "input_tokens",
                    )
                },
            }
        )
costs = pd.DataFrame(rows)
print(
    f"recorded bill (its usages at claude-sonnet-4-5 prices): ${policy_cost(recorded, prices=SONNET).recorded_cost:.4f}"
)
costs.pivot(index="policy", columns="cache", values="total_cost").sort_values("anthropic")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
for ax, cache in zip(axes, ("none", "anthropic")):
    sub = costs[costs["cache"] == cache].set_index("policy")
    ax.barh(sub.index, 1000 * sub["requests_cost"], label="requests")
    ax.barh(sub.index, 1000 * sub["summaries_cost"], left=1000 * sub["requests_cost"], label="summary calls")
    ax.set_xlabel("cost (milli-dollars, claude-sonnet-4-5 prices)")
    ax.set_title(f"cache model: {cache}")
    ax.legend()
fig.suptitle(f"Cost per policy over {SESSION.name}")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. A sweep: every recorded session, one policy, ten settings
#
# `sweep_policies` (also `pi_nb.what_if.sweep(..., policies=..., params=...)`) gives one row per
# (session, window, setting). Here observation masking with M = 1 … 10 kept steps, and Pi's
# `keepRecentTokens`, on every real session.

# %%
sessions = sorted(DATA.glob("*.jsonl"))
sweep = pd.DataFrame(
    sweep_policies(
        sessions,
        [ObservationMasking(), PiPolicy(reserve_tokens=1500)],
        context_window=WINDOW,
        params={
            "observation_masking": [{"keep_turns": m} for m in range(1, 11)],
            "pi": [{"keep_recent_tokens": 500 * k} for k in range(1, 11)],
        },
        cache="anthropic",
        prices=SONNET,
    )
)
sweep.groupby(["policy", "param_keep_turns"], dropna=False)["total_cost"].sum().head(10)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
mask = (
    sweep[sweep["policy"] == "observation_masking"]
    .groupby("param_keep_turns")[["total_cost", "peak_tokens"]]
    .agg({"total_cost": "sum", "peak_tokens": "max"})
)
pi = (
    sweep[sweep["policy"] == "pi"]
    .groupby("param_keep_recent_tokens")[["total_cost", "peak_tokens"]]
    .agg({"total_cost": "sum", "peak_tokens": "max"})
)
axes[0].plot(mask.index, 1000 * mask["total_cost"], marker="o")
axes[0].set_xlabel("observation masking: kept steps M")
axes[0].set_ylabel("cost over all sessions (milli-dollars)")
axes[0].set_title("Observation masking")
axes[1].plot(pi.index, 1000 * pi["total_cost"], marker="o", color="C1")
axes[1].set_xlabel("Pi: keepRecentTokens (tokens)")
axes[1].set_ylabel("cost over all sessions (milli-dollars)")
axes[1].set_title("Pi compaction (incl. summary calls)")
fig.suptitle(f"{len(sessions)} recorded sessions, window {WINDOW:,}, Anthropic prefix cache")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 6. What a compaction keeps, and how far the estimate is off
#
# Cost is one side; the other is what the model still sees. `retention_summary_df` (from
# `pi_nb.notebook.frames`, see `docs/research.md`) lists, per compaction, the artifacts of the
# summarised span (files read, commands, identifiers, errors, the user's instructions) and where
# each survives: verbatim in the kept messages, only in the summary, or nowhere. Here Pi's policy
# with the recording's settings and with a smaller window. (Replayed summaries that the recording
# did not write are placeholders, so only the recorded ones say anything about the summary.)

# %%
from pi_nb.notebook.frames import estimate_drift_df, retention_summary_df
from pi_nb.notebook.plots import plot_estimate_drift, plot_retention

pi_small = replay_policy(SESSION, PiPolicy(reserve_tokens=1500, keep_recent_tokens=1000), context_window=4500)
compared = {"pi, recorded settings (6,000)": pi_same.pi, "pi, 4,500-token window": pi_small.pi}
retention = retention_summary_df(compared)
retention[["policy", "compaction_id", "kind", "artifacts", "in_kept", "in_summary", "lost", "survival_rate"]]

# %%
plot_retention(compared)

# %% [markdown]
# Every size above is Pi's chars/4 estimate, calibrated per request on the recorded usage. How
# far the raw estimate is from what the provider counted, per kind of content (a negative drift:
# the estimate is low), is `estimate_drift_df`:

# %%
estimate_drift_df(SESSION)

# %%
plot_estimate_drift(SESSION)
