// Runs pi-ai 0.85.0's own provider stream functions (openai-completions, openai-responses,
// anthropic-messages) from the oracle's install (PI_ORACLE_HOME) against a local replay server,
// and prints what pi-ai makes of each recorded body: the final assistant message and the run-length
// encoded event sequence. Driven by tests/golden/make_streams.py.
// Protocol: stdin is {jobs: [{name, api, model, context, options}], hashes: [string], overflowTexts:
// [string]}; stdout is {cases: {name: {message, events, overflow}}, shortHash: {string: hash},
// overflow: [isContextOverflow of an error message with that text]}.
import { readFileSync } from "node:fs";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const dist = `${home}/node_modules/@earendil-works/pi-ai/dist`;
process.env.PI_OFFLINE = "1";
const STREAMS = {
	"openai-completions": (await import(`${dist}/api/openai-completions.js`)).stream,
	"openai-responses": (await import(`${dist}/api/openai-responses.js`)).stream,
	"anthropic-messages": (await import(`${dist}/api/anthropic-messages.js`)).stream,
};
const { isContextOverflow } = await import(`${dist}/utils/overflow.js`);
const { shortHash } = await import(`${dist}/utils/hash.js`);
const { parseStreamingJson } = await import(`${dist}/utils/json-parse.js`);

const { jobs, hashes, overflowTexts, partialJson = [] } = JSON.parse(readFileSync(0, "utf8"));
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const out = {
	cases: {},
	shortHash: Object.fromEntries(hashes.map((h) => [h, shortHash(h)])),
	partialJson: partialJson.map((text) => parseStreamingJson(text)),
	overflow: overflowTexts.map((text) => isContextOverflow({ role: "assistant", content: [], usage, stopReason: "error", errorMessage: text })),
};
for (const job of jobs) {
	const events = [];
	let final = null;
	const s = STREAMS[job.api](job.model, job.context, job.options);
	for await (const event of s) {
		const idx = event.contentIndex ?? null;
		const last = events[events.length - 1];
		if (last && last[0] === event.type && last[1] === idx) last[2] += 1;
		else events.push([event.type, idx, 1]);
		if (event.type === "done") final = event.message;
		if (event.type === "error") final = event.error;
	}
	out.cases[job.name] = {
		message: JSON.parse(JSON.stringify(final)),
		events,
		overflow: isContextOverflow(final, job.model.contextWindow),
	};
}
process.stdout.write(JSON.stringify(out));
