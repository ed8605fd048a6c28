// Calls real pi-ai 0.85.0 functions from the pi-oracle install (PI_ORACLE_HOME), for the golden
// makers of the model catalog and of costs (tests/golden/make_catalog.py, make_cost.py).
// Protocol: one JSON request on stdin {fn, args}; one JSON answer {ok, result} | {ok:false, error} on stdout.
//   catalog       -> {providers: {provider: [model, ...]}, apiKeyEnv: {provider: [var, ...]}}
//                    pi-ai's own getBuiltinProviders()/getBuiltinModels() (the flattened runtime catalog)
//                    and findEnvKeys(provider, env) with an env in which every variable is set
//   calculateCost -> [cost, ...] for args.cases [{provider, id, usage}], pi-ai's calculateCost on a
//                    copy of usage with the catalog model getBuiltinModel(provider, id)
//   usageCostBreakdown -> [[{key, cost, tokens}], ...] for args.sessions (lists of entries):
//                    pi-coding-agent's getUsageCostBreakdown (what /usage shows)
import { readFileSync } from "node:fs";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const dist = `${home}/node_modules/@earendil-works/pi-ai/dist`;
const all = await import(`${dist}/providers/all.js`);
const models = await import(`${dist}/models.js`);
const envKeys = await import(`${dist}/env-api-keys.js`);
const usageTotals = await import(`${home}/node_modules/@earendil-works/pi-coding-agent/dist/core/usage-totals.js`);

const everyVariableSet = new Proxy({}, { get: (_target, name) => (typeof name === "string" ? "set" : undefined) });

const FNS = {
	catalog: (args) => {
		const providers = {};
		for (const p of all.getBuiltinProviders()) providers[p] = all.getBuiltinModels(p);
		const apiKeyEnv = {};
		for (const p of [...all.getBuiltinProviders(), ...(args.extraProviders || [])]) {
			const found = envKeys.findEnvKeys(p, everyVariableSet);
			if (found) apiKeyEnv[p] = found;
		}
		return { providers, apiKeyEnv };
	},
	calculateCost: (args) =>
		args.cases.map(({ provider, id, usage }) => {
			const model = all.getBuiltinModel(provider, id);
			if (!model) throw new Error(`no model ${provider}/${id}`);
			const copy = structuredClone(usage);
			copy.cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
			return models.calculateCost(model, copy);
		}),
	usageCostBreakdown: (args) => args.sessions.map((entries) => usageTotals.getUsageCostBreakdown(entries)),
};

const { fn, args } = JSON.parse(readFileSync(0, "utf8"));
try {
	process.stdout.write(JSON.stringify({ ok: true, result: FNS[fn](args || {}) }));
} catch (e) {
	process.stdout.write(JSON.stringify({ ok: false, error: String(e && e.stack ? e.stack : e) }));
}
