import { createAnthropic } from '@ai-sdk/anthropic';
import type * as AzureSdk from '@ai-sdk/azure';
import type * as DeepSeekSdk from '@ai-sdk/deepseek';
import type * as GoogleSdk from '@ai-sdk/google';
import type * as GroqSdk from '@ai-sdk/groq';
import type * as MistralSdk from '@ai-sdk/mistral';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, type LanguageModel, type LanguageModelUsage, type ModelMessage, streamText, type Tool } from 'ai';
import { copyDefined, definedFields } from '../core/copy-defined.js';
import { countTokens } from './token-count.js';
import { providerFetch } from './http-client.js';
import { systemPromptCacheable } from './cache-minimum.js';
import { classifyError } from './classify.js';
import type { CloudProvider } from './cloud-providers.js';
import { resolveAiSdkTarget } from './ai-target.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_STALL_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from './defaults.js';
import { ModelCallError } from './errors.js';
import type { ProviderSpec } from './providers.js';
import type { ModelRef } from './ref.js';
import type { FinishReason, GenerateOptions, ModelAdapter, ModelRequest, ModelResponse, TokenUsage, ToolCall, ToolDefinition } from './types.js';

export interface AdapterOptions {
  /** Where API keys and base-URL overrides are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Whole-call limit. */
  timeoutMs?: number;
  /** Streaming: longest silence (no stream event) allowed, including before the first. */
  stallTimeoutMs?: number;
  /** Stream even when no `onDelta` is given (stall detection on long generations). */
  stream?: boolean;
  /**
   * The HTTP client the SDK uses (default: the global fetch). The batch path passes one that
   * records the request body instead of sending it, or answers with a stored batch result,
   * so batch bodies and their parsing are exactly the online ones.
   */
  fetch?: typeof globalThis.fetch;
}

/**
 * Option names the OpenAI-compatible provider reads for itself and keeps out of the body; extra
 * body fields with these names still go through the body-merging fetch, verbatim.
 */
const COMPATIBLE_OPTION_NAMES = new Set(['user', 'reasoningEffort', 'textVerbosity', 'strictJsonSchema', 'reasoning_effort', 'verbosity']);

// The SDK would print its warnings to the console; we return them with the response instead.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

/** The provider-model interface every SDK provider package implements (version 3). */
type LanguageModelV3 = Extract<LanguageModel, { specificationVersion: 'v3' }>;
type LanguageModelV3CallOptions = Parameters<LanguageModelV3['doGenerate']>[0];

interface Prepared {
  model: LanguageModel;
  /** The request's tools and tool choice as given (the one-shot path sends them as they are). */
  tools: ModelRequest['tools'];
  toolChoice: ModelRequest['toolChoice'];
  messages: ModelMessage[];
  settings: {
    maxOutputTokens: number;
    temperature?: number;
    topP?: number;
    topK?: number;
    stopSequences?: string[];
    seed?: number;
    providerOptions?: Record<string, Record<string, never>>;
    tools?: Record<string, Tool>;
    toolChoice?: 'auto' | 'required' | 'none';
  };
  warnings: string[];
}

/** Adapter for every HTTP provider, through the Vercel AI SDK provider packages. */
export class AiSdkAdapter implements ModelAdapter {
  readonly ref: string;
  readonly provider: string;
  readonly modelId: string;
  readonly baseURL: string;
  private readonly spec: ProviderSpec;
  private readonly apiKey: string | undefined;
  private readonly options: AdapterOptions;
  /** Vertex and Bedrock: project/region and credentials beyond one key. */
  private readonly cloud: CloudProvider | undefined;
  /** SDK models by the extra body they add (see `modelFor`). */
  private readonly models = new Map<string, LanguageModel>();
  /** The provider's optional SDK package (optional-packages.ts), loaded when the adapter is made. */
  private readonly sdk: unknown;

  constructor(ref: string, parsed: ModelRef, spec: ProviderSpec, options: AdapterOptions = {}) {
    this.ref = ref;
    this.provider = parsed.provider;
    this.modelId = parsed.model;
    this.spec = spec;
    this.options = options;
    const target = resolveAiSdkTarget(ref, parsed, spec, options.env ?? process.env);
    this.sdk = target.sdk;
    this.cloud = target.cloud;
    this.baseURL = target.baseURL;
    this.apiKey = target.apiKey;
  }

  async generate(request: ModelRequest, options: GenerateOptions = {}): Promise<ModelResponse> {
    const secrets = this.cloud?.secrets ?? (this.apiKey === undefined ? [] : [this.apiKey]);
    if (options.signal?.aborted) {
      throw new ModelCallError('aborted', `${this.provider}: call cancelled before it started`, { provider: this.provider });
    }
    if (request.messages.length === 0) {
      throw new ModelCallError('bad_request', `${this.provider}: the request has no messages`, { provider: this.provider });
    }
    const controller = new AbortController();
    let timedOut: 'total' | 'stall' | undefined;
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const stallMs = this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    const onCallerAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const totalTimer = setTimeout(() => {
      timedOut = 'total';
      controller.abort(new Error('timeout'));
    }, timeoutMs);
    let stallTimer: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        timedOut = 'stall';
        controller.abort(new Error('stalled'));
      }, stallMs);
    };

    const started = performance.now();
    try {
      const prepared = this.prepare(request, options);
      const streaming = options.onDelta !== undefined || this.options.stream === true;
      const outcome = streaming
        ? await this.runStream(prepared, controller.signal, options.onDelta, touch)
        : await this.runGenerate(prepared, controller.signal);
      const latencyMs = Math.round(performance.now() - started);
      const warnings = [...prepared.warnings, ...outcome.warnings];
      const response: ModelResponse = {
        text: outcome.text,
        finishReason: outcome.finishReason,
        usage: outcome.usage,
        latencyMs,
      };
      if (outcome.reasoning !== undefined && outcome.reasoning !== '') response.reasoning = outcome.reasoning;
      if (outcome.responseModel !== undefined) response.responseModel = outcome.responseModel;
      if (warnings.length > 0) response.warnings = warnings;
      if (outcome.toolCalls.length > 0) response.toolCalls = outcome.toolCalls;
      // A tool call is an answer even without text.
      if (outcome.text.trim() === '' && outcome.toolCalls.length === 0) {
        throw new ModelCallError(
          'empty',
          `${this.provider}: the model returned ${outcome.text === '' ? 'no text' : 'only whitespace'} (finish reason ${outcome.finishReason})`,
          { provider: this.provider, response },
        );
      }
      return response;
    } catch (error) {
      // A failing onDelta is the caller's bug, not a provider failure: pass it through unclassified.
      if (error instanceof CallerCallbackError) throw error.cause;
      if (timedOut !== undefined) {
        const message =
          timedOut === 'total'
            ? `${this.provider}: no complete answer within ${timeoutMs} ms`
            : `${this.provider}: the stream stalled (nothing received for ${stallMs} ms)`;
        throw new ModelCallError('timeout', message, { provider: this.provider, cause: error });
      }
      if (options.signal?.aborted) {
        throw new ModelCallError('aborted', `${this.provider}: call cancelled`, { provider: this.provider, cause: error });
      }
      throw classifyError(error, { provider: this.provider, secrets });
    } finally {
      clearTimeout(totalTimer);
      clearTimeout(stallTimer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private prepare(request: ModelRequest, callOptions: GenerateOptions = {}): Prepared {
    const params = request.params;
    const warnings: string[] = [];
    const kind = this.spec.kind;
    const extraBody: Record<string, unknown> = {};
    const providerOptions: Record<string, Record<string, unknown>> = {};

    let topK = params.topK;
    if (topK !== undefined && kind === 'compatible') {
      // vLLM, llama.cpp, Together and OpenRouter read `top_k` from the body; the SDK would drop it.
      extraBody.top_k = topK;
      topK = undefined;
    }
    if (params.chatTemplateKwargs !== undefined) {
      if (kind === 'compatible') extraBody.chat_template_kwargs = params.chatTemplateKwargs;
      else warnings.push(`chatTemplateKwargs is ignored by ${this.provider}: (only OpenAI-compatible servers take it)`);
    }
    if (params.thinkingBudget !== undefined) {
      if (kind === 'anthropic') {
        providerOptions.anthropic = { thinking: { type: 'enabled', budgetTokens: params.thinkingBudget } };
      } else {
        warnings.push(`thinkingBudget is ignored by ${this.provider}: (Anthropic only)`);
      }
    }
    if (params.providerOptions !== undefined) Object.assign(extraBody, params.providerOptions);

    // OpenAI-compatible servers: the SDK copies its provider options into the body itself, so
    // extra fields go there instead of through a fetch that parses and re-serialises every body
    // (a memory audit's top_k made that happen on each call, with contexts of any length).
    const viaOptions = kind === 'compatible' && Object.keys(extraBody).every((name) => !COMPATIBLE_OPTION_NAMES.has(name));
    if (viaOptions && Object.keys(extraBody).length > 0) providerOptions[this.provider] = extraBody;
    const model = this.modelFor(viaOptions ? {} : extraBody);
    const cacheControl = callOptions.cacheTtl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
    const messages = request.messages.map((message): ModelMessage => {
      // Static system prompts (judge rubrics, labeler instructions) long enough to cache get a breakpoint too.
      const breakpoint =
        message.cacheBreakpoint === true || (message.role === 'system' && kind === 'anthropic' && systemPromptCacheable(message.content, this.modelId));
      const cache = breakpoint && kind === 'anthropic' ? { providerOptions: { anthropic: { cacheControl } } } : {};
      return { role: message.role, content: message.content, ...cache } as ModelMessage;
    });
    // OpenAI-style servers cache long shared prefixes on their own: cacheBreakpoint sends nothing there,
    // but a per-group `prompt_cache_key` keeps a group's calls on the machines that hold its prefix, and
    // `prompt_cache_retention` says how long OpenAI keeps the prefix (docs/decisions.md#openai-cache-retention).
    const openaiCache = kind === 'openai' ? definedFields(callOptions, ['promptCacheKey', 'promptCacheRetention']) : {};
    if (Object.keys(openaiCache).length > 0) providerOptions.openai = openaiCache;
    const settings: Prepared['settings'] = { maxOutputTokens: params.maxTokens ?? DEFAULT_MAX_TOKENS };
    copyDefined(settings, params, ['temperature', 'topP', 'seed']);
    if (topK !== undefined) settings.topK = topK;
    if (params.stop !== undefined && params.stop.length > 0) settings.stopSequences = params.stop;
    if (Object.keys(providerOptions).length > 0) {
      settings.providerOptions = providerOptions as Record<string, Record<string, never>>;
    }
    if (request.tools !== undefined && request.tools.length > 0) {
      // No `execute`: the SDK returns the calls and runs nothing (one step).
      const tools: Record<string, Tool> = {};
      for (const definition of request.tools) {
        tools[definition.name] = {
          ...(definition.description === undefined ? {} : { description: definition.description }),
          inputSchema: jsonSchema(definition.inputSchema as Parameters<typeof jsonSchema>[0]),
        } as Tool;
      }
      settings.tools = tools;
    }
    if (request.toolChoice !== undefined) settings.toolChoice = request.toolChoice;
    return { model, messages, settings, warnings, tools: request.tools, toolChoice: request.toolChoice };
  }

  /**
   * The SDK model for calls that add `extraBody` to the request body. Built once per distinct
   * extra body and kept: building one constructs the provider's response schemas, which zod
   * compiles on their first use, so a model made per call cost about a third of a call's CPU.
   */
  private modelFor(extraBody: Record<string, unknown>): LanguageModel {
    const key = Object.keys(extraBody).length === 0 ? '' : JSON.stringify(extraBody);
    let model = this.models.get(key);
    if (model === undefined) {
      model = this.languageModel(key === '' ? this.options.fetch : mergeBodyFetch(extraBody, this.options.fetch));
      // A run uses a handful of parameter sets; a bound keeps a pathological caller from growing it.
      if (this.models.size >= 32) this.models.clear();
      this.models.set(key, model);
    }
    return model;
  }

  private languageModel(given: typeof globalThis.fetch | undefined): LanguageModel {
    const fetch = given ?? providerFetch;
    if (this.cloud !== undefined) return this.cloud.languageModel(fetch);
    const common = { baseURL: this.baseURL, fetch };
    switch (this.spec.kind) {
      case 'openai':
        // `.chat` = chat completions; the default entry point would use the Responses API.
        return createOpenAI({ ...common, apiKey: this.apiKey ?? '' }).chat(this.modelId);
      case 'anthropic':
        return createAnthropic({ ...common, apiKey: this.apiKey ?? '' })(this.modelId);
      case 'azure':
        // The model id is the deployment name; `.chat` = chat completions (api-version v1).
        return (this.sdk as typeof AzureSdk).createAzure({ ...common, apiKey: this.apiKey ?? '' }).chat(this.modelId);
      case 'mistral':
        return (this.sdk as typeof MistralSdk).createMistral({ ...common, apiKey: this.apiKey ?? '' })(this.modelId);
      case 'groq':
        return (this.sdk as typeof GroqSdk).createGroq({ ...common, apiKey: this.apiKey ?? '' })(this.modelId);
      case 'deepseek':
        return (this.sdk as typeof DeepSeekSdk).createDeepSeek({ ...common, apiKey: this.apiKey ?? '' })(this.modelId);
      case 'google':
        return (this.sdk as typeof GoogleSdk).createGoogleGenerativeAI({ ...common, apiKey: this.apiKey ?? '' })(this.modelId);
      default:
        return createOpenAICompatible({
          ...common,
          name: this.provider,
          includeUsage: true,
          ...(this.apiKey === undefined ? {} : { apiKey: this.apiKey }),
        }).chatModel(this.modelId);
    }
  }

  /**
   * One non-streaming call through the provider model's own `doGenerate` (the SDK's
   * language-model interface). `generateText` would add a step loop, prompt validation,
   * telemetry and result objects built for agents: about as much CPU per call as the HTTP
   * exchange itself, for nothing a single cell uses (docs/decisions.md#per-call-overhead).
   */
  private async runGenerate(prepared: Prepared, signal: AbortSignal): Promise<CallOutcome> {
    const model = prepared.model as LanguageModelV3;
    // The pinned provider packages all implement version 3; a change there must fail loudly.
    if (model.specificationVersion !== 'v3')
      throw new Error(`${this.provider}: provider model interface ${String(model.specificationVersion)} is not supported`);
    // `prepare` sets only the settings a request gives; tools go in the interface's own form below.
    const { tools: _tools, toolChoice: _toolChoice, ...settings } = prepared.settings;
    const call: LanguageModelV3CallOptions = { ...settings, prompt: providerPrompt(prepared.messages), abortSignal: signal };
    const offered = prepared.tools ?? [];
    if (offered.length > 0) {
      call.tools = offered.map((tool) => ({
        type: 'function' as const,
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema as Extract<NonNullable<LanguageModelV3CallOptions['tools']>[number], { type: 'function' }>['inputSchema'],
      }));
      call.toolChoice = { type: prepared.toolChoice ?? 'auto' };
    } else if (prepared.toolChoice === 'none') {
      call.toolChoice = { type: 'none' };
    }
    const result = await model.doGenerate(call);
    let text = '';
    let reasoning: string | undefined;
    const toolCalls: ToolCall[] = [];
    for (const part of result.content) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'reasoning') reasoning = (reasoning ?? '') + part.text;
      else if (part.type === 'tool-call') toolCalls.push(parseToolCall(part, offered));
    }
    const usage = fromProviderUsage(result.usage);
    return {
      text,
      reasoning,
      finishReason: mapFinishReason(result.finishReason.unified),
      usage: this.mapUsage(usage, prepared, text),
      responseModel: withFingerprint(result.response?.modelId ?? model.modelId, result.response?.body),
      warnings: [...describeWarnings(result.warnings), ...usageWarnings(usage)],
      toolCalls,
    };
  }

  private async runStream(prepared: Prepared, signal: AbortSignal, onDelta: ((delta: string) => void) | undefined, touch: () => void): Promise<CallOutcome> {
    touch();
    const result = streamText({
      model: prepared.model,
      messages: prepared.messages,
      allowSystemInMessages: true,
      maxRetries: 0,
      abortSignal: signal,
      // Errors arrive as stream parts below; the default handler would print them.
      onError: () => {},
      ...prepared.settings,
    });
    let text = '';
    let reasoning = '';
    let streamError: unknown;
    let finish: { finishReason: string; rawFinishReason: string | undefined; totalUsage: LanguageModelUsage } | undefined;
    let responseModel: string | undefined;
    let aborted = false;
    const warnings: string[] = [];
    const toolCalls: ToolCall[] = [];
    for await (const part of result.fullStream) {
      touch();
      switch (part.type) {
        case 'tool-call':
          toolCalls.push(toToolCall(part));
          break;
        case 'text-delta':
          text += part.text;
          try {
            onDelta?.(part.text);
          } catch (error) {
            throw new CallerCallbackError(error);
          }
          break;
        case 'reasoning-delta':
          reasoning += part.text;
          break;
        case 'start-step':
          warnings.push(...describeWarnings(part.warnings));
          break;
        case 'finish-step':
          responseModel = part.response.modelId;
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          streamError ??= part.error;
          break;
        case 'abort':
          aborted = true;
          break;
        default:
          break;
      }
    }
    if (streamError !== undefined) throw streamError;
    if (aborted) throw new Error('stream aborted');
    if (finish === undefined || finish.rawFinishReason === undefined) {
      throw new ModelCallError(
        'connection',
        `${this.provider}: the stream ended before the provider's finish event (truncated after ${text.length} characters)`,
        { provider: this.provider },
      );
    }
    return {
      text,
      reasoning,
      finishReason: mapFinishReason(finish.finishReason),
      usage: this.mapUsage(finish.totalUsage, prepared, text),
      responseModel,
      warnings: [...warnings, ...usageWarnings(finish.totalUsage)],
      toolCalls,
    };
  }

  private mapUsage(usage: LanguageModelUsage, prepared: Prepared, text: string): TokenUsage {
    return {
      inputTokens: usage.inputTokens ?? countTokens(prepared.messages.map((m) => String(m.content)).join('\n')),
      outputTokens: usage.outputTokens ?? countTokens(text),
      cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
      cacheWriteTokens: usage.inputTokenDetails?.cacheWriteTokens ?? 0,
      reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
    };
  }
}

class CallerCallbackError extends Error {
  constructor(cause: unknown) {
    super('onDelta threw', { cause });
  }
}

interface CallOutcome {
  text: string;
  reasoning: string | undefined;
  finishReason: FinishReason;
  usage: TokenUsage;
  responseModel: string | undefined;
  warnings: string[];
  toolCalls: ToolCall[];
}

/** The SDK's tool-call part as our plain record; an invalid call keeps what was received and why. */
function toToolCall(part: { toolCallId?: string; toolName: string; input: unknown; invalid?: boolean; error?: unknown }): ToolCall {
  const call: ToolCall = { name: part.toolName, input: part.input ?? {} };
  if (part.toolCallId !== undefined) call.id = part.toolCallId;
  if (part.invalid === true) {
    const errorName = (part.error as { name?: string } | undefined)?.name ?? '';
    call.invalid = errorName.includes('NoSuchTool') ? 'unknown-tool' : typeof part.input === 'string' ? 'unparseable' : 'invalid';
  }
  return call;
}

/** Our messages in the provider interface's prompt form (plain text parts, cache options kept). */
function providerPrompt(messages: readonly ModelMessage[]): LanguageModelV3CallOptions['prompt'] {
  return messages.map((message) => {
    const content = message.content as string;
    const providerOptions = (message as { providerOptions?: Record<string, Record<string, never>> }).providerOptions;
    const options = providerOptions === undefined ? {} : { providerOptions };
    if (message.role === 'system') return { role: 'system' as const, content, ...options };
    return { role: message.role as 'user' | 'assistant', content: [{ type: 'text' as const, text: content }], ...options };
  });
}

/**
 * The answering model's id with the backend's `system_fingerprint` when the raw body carries one
 * (OpenAI-compatible chat completions), e.g. `gpt-4o-2024-08-06 (fp_44709d6fcb)`: a silent change of
 * the model behind an alias shows in either part (docs/over-time.md).
 */
function withFingerprint(modelId: string, body: unknown): string {
  const fingerprint = body !== null && typeof body === 'object' ? (body as { system_fingerprint?: unknown }).system_fingerprint : undefined;
  return typeof fingerprint === 'string' && fingerprint !== '' ? `${modelId} (${fingerprint})` : modelId;
}

/** The provider's usage record in the shape `mapUsage` and `usageWarnings` read (only the fields they read). */
function fromProviderUsage(usage: Awaited<ReturnType<LanguageModelV3['doGenerate']>>['usage']): LanguageModelUsage {
  return {
    inputTokens: usage.inputTokens.total,
    inputTokenDetails: { cacheReadTokens: usage.inputTokens.cacheRead, cacheWriteTokens: usage.inputTokens.cacheWrite },
    outputTokens: usage.outputTokens.total,
    outputTokenDetails: { reasoningTokens: usage.outputTokens.reasoning },
  } as LanguageModelUsage;
}

/**
 * A tool call as the provider returned it (input as JSON text): parsed, and marked invalid
 * when the tool was not offered or the input is not JSON (an empty input is `{}`).
 */
function parseToolCall(part: { toolCallId: string; toolName: string; input: string }, offered: readonly ToolDefinition[]): ToolCall {
  const call: ToolCall = { name: part.toolName, input: {}, id: part.toolCallId };
  let parsed: unknown;
  let parseable = true;
  try {
    parsed = part.input.trim() === '' ? {} : JSON.parse(part.input);
  } catch {
    parseable = false;
  }
  call.input = parseable ? (parsed ?? {}) : part.input;
  if (!offered.some((tool) => tool.name === part.toolName)) call.invalid = 'unknown-tool';
  else if (!parseable) call.invalid = 'unparseable';
  return call;
}

function usageWarnings(usage: LanguageModelUsage): string[] {
  const missing: string[] = [];
  if (usage.inputTokens === undefined) missing.push('input');
  if (usage.outputTokens === undefined) missing.push('output');
  return missing.length === 0 ? [] : [`the provider reported no ${missing.join('/')} token usage; estimated with the o200k_base tokenizer`];
}

function describeWarnings(warnings: readonly unknown[] | undefined): string[] {
  return (warnings ?? []).map((w) => {
    const record = w as { type?: string; feature?: string; details?: string; message?: string };
    if (record.type === 'unsupported' || record.type === 'unsupported-setting') {
      return `unsupported by the provider: ${record.feature ?? 'a setting'}${record.details ? ` (${record.details})` : ''}`;
    }
    return record.message ?? record.details ?? JSON.stringify(w);
  });
}

const FINISH_REASONS = new Set<string>(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'] satisfies FinishReason[]);

function mapFinishReason(reason: string | undefined): FinishReason {
  return reason !== undefined && FINISH_REASONS.has(reason) ? (reason as FinishReason) : 'unknown';
}

/** A fetch that adds fields to the JSON request body verbatim (provider-specific parameters). */
function mergeBodyFetch(extra: Record<string, unknown>, base: typeof globalThis.fetch = providerFetch): typeof globalThis.fetch {
  return (input, init) => {
    if (init !== undefined && typeof init.body === 'string') {
      try {
        const body = JSON.parse(init.body) as Record<string, unknown>;
        return base(input, { ...init, body: JSON.stringify({ ...body, ...extra }) });
      } catch {
        // Not a JSON body: send it untouched.
      }
    }
    return base(input, init);
  };
}
