// Pi 0.85.0 resuming a session file, for tests/golden/make_pi_resume.py. For each case (an agent
// dir, a project dir and a session file already written by the Python side): pi-coding-agent's
// SessionManager.open on the file, then createAgentSession without a model (Pi restores the
// session's model when it exists and its provider's auth is configured, else falls back to the
// settings' default), and records the model, the thinking level and the entries it ends with.
// Protocol: stdin {cases: [{name, agentDir, cwd, sessionFile, env?}]}; stdout {cases: {name: {...}}}.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const pkg = `${home}/node_modules/@earendil-works/pi-coding-agent/dist`;
process.env.PI_OFFLINE = "1";

const { ModelRuntime } = await import(`${pkg}/core/model-runtime.js`);
const { SettingsManager } = await import(`${pkg}/core/settings-manager.js`);
const { SessionManager } = await import(`${pkg}/core/session-manager.js`);
const { createAgentSession } = await import(`${pkg}/core/sdk.js`);

const input = JSON.parse(readFileSync(0, "utf8"));
const out = { cases: {} };
const baseEnv = { ...process.env };

for (const c of input.cases) {
	for (const k of Object.keys(process.env)) if (!(k in baseEnv)) delete process.env[k];
	Object.assign(process.env, baseEnv, c.env ?? {});
	process.env.PI_CODING_AGENT_DIR = c.agentDir;
	const settings = SettingsManager.create(c.cwd, c.agentDir);
	const runtime = await ModelRuntime.create({
		authPath: join(c.agentDir, "auth.json"),
		modelsPath: join(c.agentDir, "models.json"),
	});
	const sm = SessionManager.open(c.sessionFile);
	const { session, modelFallbackMessage } = await createAgentSession({
		cwd: c.cwd,
		agentDir: c.agentDir,
		modelRuntime: runtime,
		settingsManager: settings,
		sessionManager: sm,
	});
	out.cases[c.name] = {
		model: session.model ? [session.model.provider, session.model.id] : null,
		thinkingLevel: session.thinkingLevel,
		modelFallbackMessage: modelFallbackMessage ?? null,
		entries: sm.getEntries().map((e) => {
			const { id, parentId, timestamp, ...rest } = e;
			return rest;
		}),
	};
}
process.stdout.write(JSON.stringify(out));
