// Pi 0.85.0's own credential code, run against the local fake OAuth server of
// pi_nb/auth/testing.py (driven by tests/golden/make_auth.py, one scenario per run).
// pi-ai's endpoints are constants, so a replaced global fetch sends every https request to the
// server as <server>/<host><path>. Randomness (PKCE verifiers, OAuth states) is made repeatable:
// byte i of an n-byte draw is (i + n) % 256, as the pi_nb side draws it in the test.
// stdin: {server, agentDir, scenario: {kind, provider, answers?, paste?, credentials?, files?}}
// stdout: {events, prompts, credential, error, authJson, resolved, reads}
import { readFileSync, writeFileSync, chmodSync, statSync } from "node:fs";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const piai = `${home}/node_modules/@earendil-works/pi-ai/dist`;
const core = `${home}/node_modules/@earendil-works/pi-coding-agent/dist/core`;

const fill = (n) => Array.from({ length: n }, (_, i) => (i + n) % 256);
crypto.randomBytes = (n) => Buffer.from(fill(n));
syncBuiltinESMExports();
const webcrypto = globalThis.crypto;
webcrypto.randomUUID = () => "00000000-1111-4222-8333-444444444444";
webcrypto.getRandomValues = (arr) => {
	const bytes = fill(arr.length);
	for (let i = 0; i < arr.length; i++) arr[i] = bytes[i];
	return arr;
};

const input = JSON.parse(readFileSync(0, "utf8"));
const server = input.server;
const realFetch = globalThis.fetch;
globalThis.fetch = (url, init) => {
	const u = new URL(url instanceof Request ? url.url : String(url));
	if (u.protocol === "https:") return realFetch(`${server}/${u.host}${u.pathname}${u.search}`, init);
	return realFetch(url, init);
};

const flows = {
	anthropic: async () => (await import(`${piai}/auth/oauth/anthropic.js`)).anthropicOAuth,
	"openai-codex": async () => (await import(`${piai}/auth/oauth/openai-codex.js`)).openaiCodexOAuth,
	"github-copilot": async () => (await import(`${piai}/auth/oauth/github-copilot.js`)).githubCopilotOAuth,
	xai: async () => (await import(`${piai}/auth/oauth/xai.js`)).xaiOAuth,
	"kimi-coding": async () => (await import(`${piai}/auth/oauth/kimi-coding.js`)).kimiCodingOAuth,
	openrouter: async () => (await import(`${piai}/auth/oauth/openrouter.js`)).openRouterOAuth,
};
const providers = {
	anthropic: async () => (await import(`${piai}/providers/anthropic.js`)).anthropicProvider(),
	"openai-codex": async () => (await import(`${piai}/providers/openai-codex.js`)).openaiCodexProvider(),
	"github-copilot": async () => (await import(`${piai}/providers/github-copilot.js`)).githubCopilotProvider(),
	xai: async () => (await import(`${piai}/providers/xai.js`)).xaiProvider(),
	"kimi-coding": async () => (await import(`${piai}/providers/kimi-coding.js`)).kimiCodingProvider(),
};

const { AuthStorage, ReadOnlyAuthStorage } = await import(`${core}/auth-storage.js`);
const authPath = join(input.agentDir, "auth.json");
const sc = input.scenario;
const out = { events: [], prompts: [], credential: null, error: null };

function browser(url) {
	const q = new URL(url).searchParams;
	const target = new URL((q.get("redirect_uri") ?? q.get("callback_url")).replace("//localhost:", "//127.0.0.1:"));
	target.searchParams.set("code", "fake-auth-code");
	if (q.has("state")) target.searchParams.set("state", q.get("state"));
	return realFetch(target.href).then((r) => r.text());
}

try {
	if (sc.kind === "login") {
		const flow = await flows[sc.provider]();
		const controller = new AbortController();
		const answers = [...(sc.answers ?? [])];
		const interaction = {
			signal: controller.signal,
			notify(event) {
				out.events.push(event);
				if (event.type === "auth_url" && !sc.paste) setTimeout(() => browser(event.url), 50);
			},
			prompt(p) {
				const { signal, ...rest } = p;
				out.prompts.push(rest);
				if (p.type === "manual_code") {
					if (sc.paste) {
						const auth = out.events.find((e) => e.type === "auth_url");
						const state = new URL(auth.url).searchParams.get("state") ?? "";
						return Promise.resolve(sc.paste.replace("<state>", state));
					}
					return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted"))));
				}
				return Promise.resolve(answers.shift() ?? "");
			},
		};
		const credential = await flow.login(interaction);
		out.credential = { ...credential };
		out.now = Date.now();
		const storage = AuthStorage.create(authPath);
		await storage.modify(sc.provider, async () => credential);
	} else if (sc.kind === "refresh") {
		// an expired sign-in in auth.json, resolved by pi-ai with Pi's storage: refreshed, written back
		writeFileSync(authPath, JSON.stringify(sc.credentials, null, 2), { mode: 0o600 });
		const { resolveProviderAuth } = await import(`${piai}/auth/resolve.js`);
		const { defaultProviderAuthContext } = await import(`${piai}/auth/context.js`);
		const provider = await providers[sc.provider]();
		const result = await resolveProviderAuth(provider, AuthStorage.create(authPath), defaultProviderAuthContext());
		out.resolved = {
			apiKey: result?.auth?.apiKey ?? null,
			baseUrl: result?.auth?.baseUrl ?? null,
			headers: result?.auth?.headers ?? null,
			source: result?.source ?? null,
		};
	} else if (sc.kind === "write") {
		// Pi's storage writing a sequence of credentials (modify, delete) into a fresh auth.json
		const storage = AuthStorage.create(authPath);
		for (const [op, provider, credential] of sc.ops) {
			if (op === "set") await storage.modify(provider, async () => credential);
			else await storage.delete(provider);
		}
		out.mode = (statSync(authPath).mode & 0o777).toString(8);
	} else if (sc.kind === "lock") {
		// Pi's lock (proper-lockfile, as auth-storage.ts takes it) meeting pi_nb's: a path pi_nb
		// holds (make_auth.py holds it while this runs), a lock pi_nb left stale, and Pi's own lock
		const { default: lockfile } = await import(`${home}/node_modules/proper-lockfile/index.js`);
		out.locks = {};
		for (const name of ["held", "stale"]) {
			try {
				const release = await lockfile.lock(join(input.agentDir, name), { realpath: false, retries: 0, stale: 30000 });
				out.locks[name] = "acquired";
				await release();
			} catch (error) {
				out.locks[name] = error.code ?? String(error);
			}
		}
		writeFileSync(join(input.agentDir, "own"), "{}");
		const release = await lockfile.lock(join(input.agentDir, "own"), { realpath: false, stale: 30000 });
		out.locks.ownLockIsDirectory = statSync(join(input.agentDir, "own.lock")).isDirectory();
		await release();
	} else if (sc.kind === "form") {
		// URLSearchParams and JSON.stringify, the two body encodings of the flows
		out.forms = sc.values.map((v) => new URLSearchParams({ k: v }).toString());
		out.jsons = sc.values.map((v) => JSON.stringify({ k: v }));
	} else if (sc.kind === "read") {
		// Pi's read-only storage on each file: the credential, or the error it gives
		out.reads = [];
		for (const text of sc.files) {
			writeFileSync(authPath, text);
			try {
				const cred = await new ReadOnlyAuthStorage(authPath).read(sc.provider);
				out.reads.push({ ok: cred ?? null });
			} catch (error) {
				out.reads.push({ error: String(error.message) });
			}
		}
	}
} catch (error) {
	out.error = String(error?.message ?? error);
}
try {
	out.authJson = readFileSync(authPath, "utf8");
} catch {
	out.authJson = null;
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
