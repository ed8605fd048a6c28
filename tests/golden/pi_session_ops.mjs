// Drive the real Pi 0.85.0 SessionManager through scripted operations and report what it wrote.
//
// Used only by tests/golden/make_session_roundtrip.py (never by the tests). The oracle exposes
// SessionManager.open/inspect/buildSessionContext but no appends, and the point here is to see the
// bytes Pi itself writes for every append kind, so this script imports the very session-manager.js
// the oracle installed ($PI_ORACLE_HOME/node_modules) and runs it with two sources pinned:
//   * crypto.randomUUID -> a counter ("00000001-0000-4000-8000-000000000000", ...), optionally
//     preceded by a scenario's own list (to force id collisions);
//   * new Date() (no arguments) -> 2026-01-01T00:00:00.000Z + n * clockStep ms.
// Session ids come from Pi's own uuidv7 (random); the script reports them so a replay can reuse them.
//
// stdin: {"scenarios": [{name, start, ops, uuids?, clockStep?}]}; stdout: {"results": [...]}.
// Every path under the scenario's temp dir is reported with the dir replaced by "<DIR>".

import crypto from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const HOME = process.env.PI_ORACLE_HOME;
if (!HOME) throw new Error("PI_ORACLE_HOME must be set");
const CA = join(HOME, "node_modules/@earendil-works/pi-coding-agent");

// --- pinned randomness and clock ---------------------------------------------------------------
let uuidQueue = [];
let uuidCounter = 0;
crypto.randomUUID = () => {
	if (uuidQueue.length) return uuidQueue.shift();
	uuidCounter += 1;
	return `${uuidCounter.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
};
syncBuiltinESMExports();

const RealDate = Date;
const T0 = RealDate.UTC(2026, 0, 1);
let clockNow = T0;
let clockStep = 1000;
class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) {
			super(clockNow);
			clockNow += clockStep;
		} else {
			super(...args);
		}
	}
	static now() {
		return clockNow;
	}
}
globalThis.Date = FakeDate;

const { SessionManager } = await import(pathToFileURL(join(CA, "dist/core/session-manager.js")).href);

// --- helpers -----------------------------------------------------------------------------------
function resolveArgs(value, refs) {
	if (Array.isArray(value)) return value.map((v) => resolveArgs(v, refs));
	if (value && typeof value === "object") {
		if ("$ref" in value) {
			// a ref whose op failed (no id) stands for an id that does not exist
			return value.$ref in refs ? refs[value.$ref] : `unresolved-${value.$ref}`;
		}
		if ("$undefined" in value) return undefined;
		if ("$path" in value) return join(refs.__dir, value.$path);
		const out = {};
		for (const [k, v] of Object.entries(value)) out[k] = resolveArgs(v, refs);
		return out;
	}
	return value;
}

function snapshot(sm) {
	const entries = sm.getEntries();
	const labels = {};
	for (const e of entries) {
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	return {
		header: sm.getHeader(),
		sessionId: sm.getSessionId(),
		sessionFile: sm.getSessionFile() ?? null,
		cwd: sm.getCwd(),
		sessionName: sm.getSessionName() ?? null,
		leafId: sm.getLeafId(),
		entries,
		branch: sm.getBranch(),
		contextEntries: sm.buildContextEntries(),
		context: sm.buildSessionContext(),
		tree: sm.getTree(),
		labels,
	};
}

function listFiles(dir, prefix = "", out = {}) {
	if (!existsSync(dir)) return out;
	for (const ent of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
		const rel = prefix + ent.name;
		if (ent.isDirectory()) listFiles(join(dir, ent.name), `${rel}/`, out);
		else out[rel] = readFileSync(join(dir, ent.name), "utf8");
	}
	return out;
}

function runScenario(sc) {
	const dir = mkdtempSync(join(tmpdir(), "pi-session-ops-"));
	const sessionDir = join(dir, "sessions");
	uuidQueue = [...(sc.uuids ?? [])];
	uuidCounter = sc.uuidStart ?? 0;
	clockNow = T0;
	clockStep = sc.clockStep ?? 1000;
	const refs = { __dir: dir };
	const steps = [];
	const sessionIds = [];
	let sm;
	const noteSession = () => {
		if (sm && sessionIds[sessionIds.length - 1] !== sm.getSessionId()) sessionIds.push(sm.getSessionId());
	};
	try {
		for (const [name, text] of Object.entries(sc.files ?? {})) {
			const p = join(dir, name);
			mkdirSync(join(p, ".."), { recursive: true });
			writeFileSync(p, text);
		}
		const start = resolveArgs(sc.start, refs);
		if (start.kind === "create") sm = SessionManager.create(start.cwd, sessionDir, start.options);
		else if (start.kind === "inMemory") sm = SessionManager.inMemory(start.cwd, start.options, start.entries);
		else if (start.kind === "open") sm = SessionManager.open(join(dir, start.file), start.sessionDir ? sessionDir : undefined, start.cwdOverride);
		else if (start.kind === "forkFrom") sm = SessionManager.forkFrom(join(dir, start.file), start.cwd, sessionDir, start.options);
		else throw new Error(`unknown start ${start.kind}`);
		noteSession();
		for (const op of sc.ops ?? []) {
			const [method, ...rawArgs] = op.call;
			const args = resolveArgs(rawArgs, refs);
			const step = { call: op.call };
			try {
				const result = sm[method](...args);
				step.result = result === undefined ? null : result;
				if (op.as) refs[op.as] = result;
			} catch (err) {
				step.error = String(err.message);
			}
			step.filesAfter = Object.keys(listFiles(dir));
			noteSession();
			steps.push(step);
		}
		const res = { name: sc.name, steps, sessionIds, final: snapshot(sm), files: listFiles(dir) };
		return JSON.parse(JSON.stringify(res).split(dir).join("<DIR>"));
	} catch (err) {
		return JSON.parse(JSON.stringify({ name: sc.name, steps, sessionIds, startError: String(err.message) }).split(dir).join("<DIR>"));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { scenarios } = JSON.parse(input);
process.stdout.write(JSON.stringify({ results: scenarios.map(runScenario) }));
