// pi-ai 0.85.0's provider-independent helpers, called directly from its dist modules (and, for
// error texts, its real stream functions and the real openai / @anthropic-ai/sdk clients against a
// replaced fetch). Driven by tests/golden/make_wire_common.py.
// Protocol: stdin is {jobs: [{id, fn, args}]}; stdout is {results: {id: {ok: value} | {throws: message}}}.
import { readFileSync } from "node:fs";

const home = process.env.PI_ORACLE_HOME || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/pi-oracle`;
const nm = `${home}/node_modules`;
const ai = `${nm}/@earendil-works/pi-ai/dist`;
const core = `${nm}/@earendil-works/pi-coding-agent/dist/core`;
process.env.PI_OFFLINE = "1";

const { transformMessages } = await import(`${ai}/api/transform-messages.js`);
const so = await import(`${ai}/api/simple-options.js`);
const { estimateContextTokens } = await import(`${ai}/utils/estimate.js`);
const eb = await import(`${ai}/utils/error-body.js`);
const { getSupportedThinkingLevels, clampThinkingLevel } = await import(`${ai}/models.js`);
const { shortHash } = await import(`${ai}/utils/hash.js`);
const { calculateCost } = await import(`${ai}/models.js`);
const { getPiUserAgent } = await import(`${ai}/utils/pi-user-agent.js`);
const { sanitizeSurrogates } = await import(`${ai}/utils/sanitize-unicode.js`);
const { clampOpenAIPromptCacheKey } = await import(`${ai}/api/openai-prompt-cache.js`);
const cs = await import(`${ai}/api/constrained-sampling.js`);
const { splitDeferredTools } = await import(`${ai}/utils/deferred-tools.js`);
const { getProviderEnvValue } = await import(`${ai}/utils/provider-env.js`);
const { headersToRecord } = await import(`${ai}/utils/headers.js`);
const { mergeProviderAttributionHeaders } = await import(`${core}/provider-attribution.js`);
const { SettingsManager } = await import(`${core}/settings-manager.js`);
const completions = await import(`${ai}/api/openai-completions.js`);
const responses = await import(`${ai}/api/openai-responses.js`);
const anthropicApi = await import(`${ai}/api/anthropic-messages.js`);
const { default: OpenAI } = await import(`${nm}/openai/index.mjs`);
const { default: Anthropic } = await import(`${nm}/@anthropic-ai/sdk/index.mjs`);

const FIXED_NOW = 1700000000000;

// tool-call id normalisers (same names in tests/test_wire_common.py)
const normalizers = {
	none: undefined,
	identity: (id) => id,
	sanitize64: (id) => id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64),
	prefix: (id, model, source) => `${model.id}:${source.provider}/${source.model}:${id.slice(0, 12)}`,
};

function bodyBytes(spec) {
	if (spec.b64 !== undefined) return Buffer.from(spec.b64, "base64");
	return spec.text;
}

function fakeFetch(response) {
	if (response.reject === "connect") return async () => Promise.reject(new TypeError("fetch failed"));
	if (response.reject === "timeout") {
		return (_url, init) =>
			new Promise((_resolve, reject) => {
				init?.signal?.addEventListener("abort", () => reject(new DOMException("This operation was aborted", "AbortError")));
			});
	}
	return async () => new Response(response.status === 204 ? null : bodyBytes(response.body), {
		status: response.status,
		headers: response.headers ?? {},
	});
}

function jsError(spec) {
	const error = new Error(spec.message);
	for (const [k, v] of Object.entries(spec.fields ?? {})) error[k] = v;
	return error;
}

function describeSdkError(error) {
	if (!(error instanceof Error)) return { nonError: JSON.stringify(error) ?? String(error) };
	const out = { name: error.constructor.name, message: error.message };
	if ("status" in error) out.status = error.status ?? null;
	if ("error" in error) out.error = error.error === undefined ? { undefined: true } : error.error;
	return out;
}

async function sdkCall(family, response) {
	const fetch = fakeFetch(response);
	const timeout = response.reject === "timeout" ? 50 : undefined;
	try {
		if (family === "openai") {
			const client = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0, timeout, baseURL: "https://api.example.test/v1" });
			const s = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
			for await (const _ of s) {
			}
		} else if (family === "openai-responses") {
			const client = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0, timeout, baseURL: "https://api.example.test/v1" });
			const s = await client.responses.create({ model: "m", input: "hi", stream: true });
			for await (const _ of s) {
			}
		} else {
			const client = new Anthropic({ apiKey: "sk-test", fetch, maxRetries: 0, timeout, baseURL: "https://api.example.test" });
			const s = await client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], stream: true });
			for await (const _ of s) {
			}
		}
		return { noError: true };
	} catch (error) {
		return describeSdkError(error);
	}
}

const apiModels = {
	"openai-completions": { id: "gpt-test", name: "t", api: "openai-completions", provider: "openai", baseUrl: "https://api.example.test/v1", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 },
	"openai-responses": { id: "gpt-test", name: "t", api: "openai-responses", provider: "openai", baseUrl: "https://api.example.test/v1", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 },
	"anthropic-messages": { id: "claude-test", name: "t", api: "anthropic-messages", provider: "anthropic", baseUrl: "https://api.example.test", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 4096 },
};
const apiStreams = { "openai-completions": completions.stream, "openai-responses": responses.stream, "anthropic-messages": anthropicApi.stream };

async function piErrorMessage(api, response) {
	const model = apiModels[api];
	const context = { systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
	const s = apiStreams[api](model, context, { apiKey: "sk-test", fetch: fakeFetch(response), maxRetries: 0, ...(response.reject === "timeout" ? { timeoutMs: 50 } : {}) });
	let final = null;
	for await (const event of s) {
		if (event.type === "done") final = event.message;
		if (event.type === "error") final = event.error;
	}
	return { stopReason: final?.stopReason, errorMessage: final?.errorMessage ?? null };
}

const fns = {
	transformMessages: ([messages, model, normalizer]) => {
		const realNow = Date.now;
		Date.now = () => FIXED_NOW;
		try {
			return transformMessages(messages, model, normalizers[normalizer]);
		} finally {
			Date.now = realNow;
		}
	},
	estimateContextTokens: ([context]) => estimateContextTokens(context),
	buildBaseOptions: ([model, context, options, apiKey]) => so.buildBaseOptions(model, context, options ?? undefined, apiKey ?? undefined),
	clampMaxTokensToContext: ([model, context, maxTokens]) => so.clampMaxTokensToContext(model, context, maxTokens),
	adjustMaxTokensForThinking: ([base, modelMax, level, budgets]) => so.adjustMaxTokensForThinking(base ?? undefined, modelMax, level, budgets ?? undefined),
	thinkingBudgetForLevel: ([level, budgets]) => so.thinkingBudgetForLevel(level, budgets ?? undefined),
	clampThinkingBudgetToAnswerRoom: ([budget, ceiling]) => so.clampThinkingBudgetToAnswerRoom(budget, ceiling),
	clampReasoning: ([level]) => so.clampReasoning(level ?? undefined) ?? null,
	constants: () => ({ MIN_ANSWER_TOKENS: so.MIN_ANSWER_TOKENS, DEFAULT_THINKING_BUDGETS: so.DEFAULT_THINKING_BUDGETS, MAX_PROVIDER_ERROR_BODY_CHARS: eb.MAX_PROVIDER_ERROR_BODY_CHARS }),
	getSupportedThinkingLevels: ([model]) => getSupportedThinkingLevels(model),
	clampThinkingLevel: ([model, level]) => clampThinkingLevel(model, level),
	userAgent: () => getPiUserAgent(),
	shortHash: ([text]) => shortHash(text),
	calculateCost: ([model, usage]) => {
		const cost = calculateCost(model, usage);
		return { cost, usage };
	},
	normalizeError: ([spec]) => eb.normalizeProviderError(spec.throwValue !== undefined ? spec.throwValue : jsError(spec)),
	formatError: ([spec, prefix]) => eb.formatProviderError(eb.normalizeProviderError(spec.throwValue !== undefined ? spec.throwValue : jsError(spec)), prefix ?? undefined),
	truncateErrorText: ([text, max]) => eb.truncateErrorText(text, max),
	safeJsonStringify: ([value]) => eb.safeJsonStringify(value),
	sdkError: async ([family, response]) => sdkCall(family, response),
	piErrorMessage: async ([api, response]) => piErrorMessage(api, response),
	sanitizeSurrogates: ([text]) => sanitizeSurrogates(text),
	clampOpenAIPromptCacheKey: ([key]) => clampOpenAIPromptCacheKey(key ?? undefined) ?? null,
	makeStrictJsonSchema: ([schema]) => cs.makeStrictJsonSchema(schema),
	getJsonSchemaToolParameters: ([tool, strict]) => cs.getJsonSchemaToolParameters(tool, strict ?? undefined),
	resolveJsonSchemaStrictSampling: ([tool, supports]) => cs.resolveJsonSchemaStrictSampling(tool, supports) ?? null,
	resolveGrammarConstrainedSampling: ([tool, supports]) => cs.resolveGrammarConstrainedSampling(tool, supports) ?? null,
	createGrammarToolInputProperties: ([tools, supports]) => Object.fromEntries(cs.createGrammarToolInputProperties(tools ?? undefined, supports)),
	grammarDeltas: ([prop, steps]) => {
		const buffer = { input: "", started: false, closed: false };
		const out = [];
		for (const [next, close] of steps) {
			try {
				out.push({ ok: cs.appendGrammarToolInputJsonDelta(buffer, prop, next, close) ?? null });
			} catch (e) {
				out.push({ throws: e.message });
			}
		}
		return out;
	},
	splitDeferredTools: ([context, enabled, lower]) => {
		const r = splitDeferredTools(context, enabled, lower ? (n) => n.toLowerCase() : undefined);
		return { immediate: r.immediate, deferred: Object.fromEntries(r.deferred) };
	},
	getProviderEnvValue: ([name, env, processEnv]) => {
		const saved = process.env[name];
		if (processEnv === null) delete process.env[name];
		else process.env[name] = processEnv;
		try {
			return getProviderEnvValue(name, env ?? undefined) ?? null;
		} finally {
			if (saved === undefined) delete process.env[name];
			else process.env[name] = saved;
		}
	},
	headersToRecord: ([pairs]) => {
		const h = new Headers();
		for (const [k, v] of pairs) h.append(k, v);
		return headersToRecord(h);
	},
	attributionHeaders: ([model, sessionId, sources, telemetryEnv, setting]) => {
		const saved = process.env.PI_TELEMETRY;
		if (telemetryEnv === null) delete process.env.PI_TELEMETRY;
		else process.env.PI_TELEMETRY = telemetryEnv;
		try {
			const settings = SettingsManager.inMemory(setting === null ? {} : { enableInstallTelemetry: setting });
			return mergeProviderAttributionHeaders(model, settings, sessionId ?? undefined, ...sources) ?? null;
		} finally {
			if (saved === undefined) delete process.env.PI_TELEMETRY;
			else process.env.PI_TELEMETRY = saved;
		}
	},
};

const input = JSON.parse(readFileSync(0, "utf8"));
const results = {};
for (const job of input.jobs) {
	try {
		const value = await fns[job.fn](job.args);
		results[job.id] = { ok: value === undefined ? null : value };
	} catch (error) {
		results[job.id] = { throws: String(error?.message ?? error) };
	}
}
process.stdout.write(JSON.stringify({ results }));
