// Calls real Pi 0.85.0 functions that pi-oracle does not expose, from the oracle's own install
// (PI_ORACLE_HOME), the way the oracle does: prompt-template helpers (root exports of
// core/prompt-templates.js) and the package manager's module-private skill/prompt walks
// (collectSkillEntries, collectAutoPromptEntries), exported by a load hook that appends one
// `export {...}` line to the source text Node loads (nothing on disk changes).
// Protocol: one JSON request per stdin line {fn, args}; one {ok, result}|{ok:false,error} per line.
import { register } from "node:module";
import { readFileSync } from "node:fs";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const dist = `${home}/node_modules/@earendil-works/pi-coding-agent/dist`;
const hook = `
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.endsWith("/pi-coding-agent/dist/core/package-manager.js")) return result;
  const source = typeof result.source === "string" ? result.source : Buffer.from(result.source).toString("utf8");
  return { ...result, source: source + "\\nexport { collectSkillEntries as __pinb_collectSkillEntries, collectAutoPromptEntries as __pinb_collectAutoPromptEntries };\\n", shortCircuit: true };
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url);
process.env.PI_OFFLINE = "1";
const PT = await import(`${dist}/core/prompt-templates.js`);
const PM = await import(`${dist}/core/package-manager.js`);

const FNS = {
	parseCommandArgs: (a) => PT.parseCommandArgs(a.argsString),
	substituteArgs: (a) => PT.substituteArgs(a.content, a.args),
	expandPromptTemplate: (a) => PT.expandPromptTemplate(a.text, a.templates),
	loadPromptTemplates: (a) => PT.loadPromptTemplates(a.options),
	collectSkillEntries: (a) => PM.__pinb_collectSkillEntries(a.dir, a.mode),
	collectAutoPromptEntries: (a) => PM.__pinb_collectAutoPromptEntries(a.dir),
};

const out = [];
for (const line of readFileSync(0, "utf8").split("\n")) {
	if (!line) continue;
	const { fn, args } = JSON.parse(line);
	try {
		const r = FNS[fn](args);
		out.push(JSON.stringify({ ok: true, result: r === undefined ? null : r }));
	} catch (e) {
		out.push(JSON.stringify({ ok: false, error: String(e?.message ?? e), errorName: e?.name ?? "Error" }));
	}
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
