// Runs Pi 0.85.0's own compaction checks on hand-made states: AgentSession.prototype._checkCompaction
// (after a run: skipAbortedCheck = true; before a prompt: false) and
// _compactBeforeNextAssistantResponse (between turns), each called on a stub `this` that holds the
// case's settings, model, session branch, agent messages and overflow-retry flag, and records
// whether and how `_runAutoCompaction(reason, willRetry)` was called and what was emitted.
// Driven by tests/golden/make_compaction_decision.py. argv[2]: a JSON file {cases: [...]}; stdout: {results: [...]}.
import { readFileSync } from "node:fs";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const core = `${home}/node_modules/@earendil-works/pi-coding-agent/dist/core`;
process.env.PI_OFFLINE = "1";
const { AgentSession } = await import(`${core}/agent-session.js`);

const { cases } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const c of cases) {
	const calls = [];
	const events = [];
	const stub = {
		settingsManager: { getCompactionSettings: () => ({ ...c.settings }) },
		model: c.model ?? undefined,
		sessionManager: { getBranch: () => c.branch },
		agent: { state: { messages: c.messages.slice() } },
		_overflowRecoveryAttempted: c.overflowAttempted,
		_runAutoCompaction: async (reason, willRetry) => {
			calls.push({ reason, willRetry });
			return false;
		},
		_emit: (event) => events.push(event),
		_emitSessionCompactFailed: async (event) => events.push({ type: "session_compact_failed", ...event }),
	};
	let threw = null;
	try {
		if (c.checkpoint === "between_turns") {
			await AgentSession.prototype._compactBeforeNextAssistantResponse.call(stub, {
				systemPrompt: "",
				messages: c.messages.slice(),
				tools: [],
			});
		} else {
			await AgentSession.prototype._checkCompaction.call(stub, c.message, c.checkpoint === "after_run");
		}
	} catch (error) {
		threw = String(error);
	}
	results.push({
		threw,
		run: calls.length ? calls[0] : null,
		calls: calls.length,
		errorMessage: events.find((e) => e.type === "compaction_end")?.errorMessage ?? null,
		dropped: stub.agent.state.messages.length < c.messages.length,
		overflowAttemptedAfter: stub._overflowRecoveryAttempted,
	});
}
process.stdout.write(JSON.stringify({ results }));
