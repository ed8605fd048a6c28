// The wire as Pi 0.85.0 writes it: for each job, pi-coding-agent's own ModelRuntime (built-in
// catalog, credentials from the environment, the agent dir's models.json) streams one turn with
// the options Pi's agent passes (core/sdk.js's streamFn: reasoning = the thinking level unless
// "off", the session id, transport/retry/timeout settings, the provider attribution headers of
// core/provider-attribution.js), and a replaced global fetch captures the request (url, method,
// headers, body) and answers it with the job's canned response. Driven by tests/golden/make_wire.py.
// Protocol: stdin is {agentDir, jobs: [{name, provider, model, context, level, sessionId,
// response: {status, headers, body}, settings?}]}; stdout is {cases: {name: {requests: [...],
// message, events}}} (events run-length encoded [type, contentIndex, count]).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { zstdDecompressSync } from "node:zlib";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const core = `${home}/node_modules/@earendil-works/pi-coding-agent/dist/core`;
process.env.PI_OFFLINE = "1";

const input = JSON.parse(readFileSync(0, "utf8"));
process.env.PI_CODING_AGENT_DIR = input.agentDir;
// gaxios (google-auth-library: Vertex's application-default credentials) fetches through
// window.fetch when there is a window, else node-fetch: a window makes it use the replaced fetch
if (input.windowFetch) globalThis.window = { fetch: (...args) => globalThis.fetch(...args) };
const { ModelRuntime } = await import(`${core}/model-runtime.js`);
const { SettingsManager } = await import(`${core}/settings-manager.js`);
const { mergeProviderAttributionHeaders } = await import(`${core}/provider-attribution.js`);
const { DEFAULT_HTTP_IDLE_TIMEOUT_MS } = await import(`${core}/http-dispatcher.js`);

let current = null; // {requests, response}
globalThis.fetch = async (url, init = {}) => {
	const request = url instanceof Request ? url : new Request(url, init);
	const headers = {};
	for (const [k, v] of request.headers.entries()) headers[k.toLowerCase()] = v;
	let body = init.body !== undefined && typeof init.body === "string" ? init.body : await request.clone().text();
	// Codex compresses its JSON body with zstd where the runtime can (Node 22): recorded decompressed
	if (headers["content-encoding"] === "zstd") {
		body = zstdDecompressSync(Buffer.from(await request.clone().arrayBuffer())).toString("utf8");
	}
	current.requests.push({ url: request.url, method: request.method, headers, body });
	const r = current.responses[Math.min(current.requests.length - 1, current.responses.length - 1)];
	return new Response(r.body === null ? null : r.body, { status: r.status, headers: r.headers });
};

// The AWS SDK (Bedrock) sends through @smithy/node-http-handler, not fetch: its handlers' handle()
// is replaced the same way (the request recorded, the canned response answered as a Node stream).
{
	const { createRequire } = await import("node:module");
	const { Readable } = await import("node:stream");
	const require = createRequire(`${home}/node_modules/@aws-sdk/client-bedrock-runtime/package.json`);
	const smithy = require("@smithy/node-http-handler");
	const { HttpResponse } = require("@smithy/core/protocols");
	const handle = async function (request) {
		const port = request.port ? `:${request.port}` : "";
		const query = new URLSearchParams(request.query ?? {}).toString();
		const url = `${request.protocol}//${request.hostname}${port}${request.path}${query ? `?${query}` : ""}`;
		const headers = {};
		for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = v;
		const body = request.body === undefined ? "" : Buffer.from(request.body).toString("utf8");
		current.requests.push({ url, method: request.method, headers, body });
		const r = current.responses[Math.min(current.requests.length - 1, current.responses.length - 1)];
		const bytes = r.bodyB64 !== undefined ? Buffer.from(r.bodyB64, "base64") : Buffer.from(r.body ?? "", "utf8");
		return {
			response: new HttpResponse({ statusCode: r.status, headers: r.headers ?? {}, body: Readable.from([bytes]) }),
		};
	};
	smithy.NodeHttpHandler.prototype.handle = handle;
	smithy.NodeHttp2Handler.prototype.handle = handle;
}

const runtime = await ModelRuntime.create({
	authPath: join(input.agentDir, "auth.json"),
	modelsPath: join(input.agentDir, "models.json"),
});
const out = { cases: {} };
for (const job of input.jobs) {
	const settings = SettingsManager.inMemory(job.settings ?? {});
	const model = runtime.getModel(job.provider, job.model);
	if (!model) {
		out.cases[job.name] = { missing: true };
		continue;
	}
	current = { requests: [], responses: job.responses };
	const retry = settings.getProviderRetrySettings();
	const idle = settings.getHttpIdleTimeoutMs();
	const options = {
		// pi-agent-core's Agent.createLoopConfig
		reasoning: job.level === "off" ? undefined : job.level,
		sessionId: job.sessionId,
		transport: settings.getTransport(),
		thinkingBudgets: settings.getThinkingBudgets(),
		maxRetryDelayMs: retry.maxRetryDelayMs,
	};
	// pi-coding-agent's core/sdk.js streamFn
	const streamOptions = {
		...options,
		timeoutMs: retry.timeoutMs ?? (idle === 0 ? 2147483647 : idle ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS),
		websocketConnectTimeoutMs: settings.getWebSocketConnectTimeoutMs(),
		maxRetries: retry.maxRetries,
		maxRetryDelayMs: options.maxRetryDelayMs ?? retry.maxRetryDelayMs,
		transformHeaders: async (requestHeaders) =>
			mergeProviderAttributionHeaders(model, settings, options.sessionId, requestHeaders) ?? {},
		signal: new AbortController().signal,
	};
	// optional: a fixed clock and invocation id (the AWS SDK's SigV4 date and amz-sdk-invocation-id)
	const RealDate = globalThis.Date;
	const realUuid = globalThis.crypto.randomUUID;
	if (job.fixedNow !== undefined) {
		globalThis.Date = class extends RealDate {
			constructor(...args) {
				if (args.length === 0) super(job.fixedNow);
				else super(...args);
			}
			static now() {
				return job.fixedNow;
			}
		};
	}
	if (job.fixedUuid !== undefined) globalThis.crypto.randomUUID = () => job.fixedUuid;
	const events = [];
	let final = null;
	try {
		const s = runtime.streamSimple(model, job.context, streamOptions);
		for await (const event of s) {
			const idx = event.contentIndex ?? null;
			const last = events[events.length - 1];
			if (last && last[0] === event.type && last[1] === idx) last[2] += 1;
			else events.push([event.type, idx, 1]);
			if (event.type === "done") final = event.message;
			if (event.type === "error") final = event.error;
		}
	} catch (error) {
		final = { thrown: String(error?.message ?? error) };
	}
	globalThis.Date = RealDate;
	globalThis.crypto.randomUUID = realUuid;
	if (final && typeof final.timestamp === "number") final.timestamp = 0;
	out.cases[job.name] = { requests: current.requests, message: JSON.parse(JSON.stringify(final)), events };
}
process.stdout.write(JSON.stringify(out));
