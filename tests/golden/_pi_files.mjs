// Pi 0.85.0 reading its own files, for tests/golden/make_pi_files.py. For each case (an agent dir
// and a project dir already written by the Python side): pi-coding-agent's SettingsManager
// (merged defaults, compaction settings, load errors), ModelRuntime.create({modelsPath}) (every
// model of the providers models.json names, the asked-for models, getError()), and
// createAgentSession over an in-memory SessionManager (the model and thinking level a new session
// picks and the entries it writes), plus pi-ai's clampThinkingLevel for every model x level.
// Protocol: stdin {cases: [{name, agentDir, cwd, env?, lookups: [[provider, id]], newSession?:
// {thinkingLevel?, model?: [provider, id]}}]}; stdout {cases: {name: {...}}}.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const pkg = `${home}/node_modules/@earendil-works/pi-coding-agent/dist`;
process.env.PI_OFFLINE = "1";

const { ModelRuntime } = await import(`${pkg}/core/model-runtime.js`);
const { ModelConfig } = await import(`${pkg}/core/model-config.js`);
const { SettingsManager } = await import(`${pkg}/core/settings-manager.js`);
const { SessionManager } = await import(`${pkg}/core/session-manager.js`);
const { createAgentSession } = await import(`${pkg}/core/sdk.js`);
const { clampThinkingLevel } = await import(`${home}/node_modules/@earendil-works/pi-ai/dist/models.js`);

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
const input = JSON.parse(readFileSync(0, "utf8"));
const out = { cases: {} };
const plain = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const baseEnv = { ...process.env };

for (const c of input.cases) {
	for (const k of Object.keys(process.env)) if (!(k in baseEnv)) delete process.env[k];
	Object.assign(process.env, baseEnv, c.env ?? {});
	process.env.PI_CODING_AGENT_DIR = c.agentDir;
	const result = {};
	const settings = SettingsManager.create(c.cwd, c.agentDir);
	result.settings = {
		defaultProvider: settings.getDefaultProvider() ?? null,
		defaultModel: settings.getDefaultModel() ?? null,
		defaultThinkingLevel: settings.getDefaultThinkingLevel() ?? null,
		modelThinkingLevels: settings.getAllModelThinkingLevels(),
		compaction: settings.getCompactionSettings(),
		errors: settings.drainErrors().map((e) => ({ scope: e.scope, error: String(e.error?.message ?? e.error) })),
	};
	const modelsPath = join(c.agentDir, "models.json");
	const config = await ModelConfig.load(modelsPath);
	const runtime = await ModelRuntime.create({ authPath: join(c.agentDir, "auth.json"), modelsPath });
	result.error = runtime.getError() ?? null;
	result.configError = config.getError() ?? null;
	const providers = {};
	for (const p of config.getProviderIds()) {
		const cfg = config.getProvider(p);
		// a built-in provider's whole catalog is large: keep the models models.json names or overrides
		const named = new Set([...(cfg.models ?? []).map((m) => m.id), ...Object.keys(cfg.modelOverrides ?? {})]);
		const all = runtime.getModels(p);
		const kept = all.length > 40 ? all.filter((m) => named.has(m.id)) : all;
		providers[p] = { count: all.length, models: plain(kept) };
	}
	result.providers = providers;
	result.lookups = [];
	for (const [p, id] of c.lookups ?? []) {
		const m = runtime.getModel(p, id);
		const entry = { provider: p, id, model: plain(m), clamp: m ? Object.fromEntries(LEVELS.map((l) => [l, clampThinkingLevel(m, l)])) : null };
		if (m) {
			try {
				const a = await runtime.getAuth(m);
				entry.auth = { apiKey: a?.auth?.apiKey ?? null, headers: a?.auth?.headers ?? null };
			} catch (error) {
				entry.auth = { error: String(error?.message ?? error) };
			}
		}
		result.lookups.push(entry);
	}
	result.auth = {};
	for (const p of config.getProviderIds()) {
		result.auth[p] = { configured: runtime.hasConfiguredAuth(p) };
		const m = runtime.getModels(p)[0];
		if (!m) continue;
		try {
			const a = await runtime.getAuth(m);
			result.auth[p].apiKey = a?.auth?.apiKey ?? null;
			result.auth[p].headers = a?.auth?.headers ?? null;
			result.auth[p].baseUrl = a?.auth?.baseUrl ?? null;
		} catch (error) {
			result.auth[p].error = String(error?.message ?? error);
		}
	}
	if (c.newSession) {
		const sm = SessionManager.inMemory(c.cwd);
		const opts = { cwd: c.cwd, agentDir: c.agentDir, modelRuntime: runtime, settingsManager: settings, sessionManager: sm };
		if (c.newSession.thinkingLevel) opts.thinkingLevel = c.newSession.thinkingLevel;
		if (c.newSession.model) opts.model = runtime.getModel(...c.newSession.model);
		const { session } = await createAgentSession(opts);
		for (const [op, arg] of c.newSession.ops ?? []) {
			if (op === "thinking") session.setThinkingLevel(arg);
			else if (op === "model") await session.setModel(runtime.getModel(...arg));
		}
		result.newSession = {
			model: session.model ? [session.model.provider, session.model.id] : null,
			thinkingLevel: session.thinkingLevel,
			entries: sm.getEntries().map((e) => {
				const { id, parentId, timestamp, ...rest } = e;
				return rest;
			}),
		};
	}
	out.cases[c.name] = result;
}
process.stdout.write(JSON.stringify(out));
