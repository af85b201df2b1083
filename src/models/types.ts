import type { TokenCounts } from '../core/token-counts.js';

/**
 * The one interface every model speaks. A request is plain data so that its
 * canonical JSON (plus the sample index) is the cell key in the store.
 */

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /**
   * Marks the end of a long shared prefix: adapters that support prompt caching
   * (Anthropic `cache_control`) put a cache breakpoint on this message.
   */
  cacheBreakpoint?: boolean;
}

/** Decoding parameters. Always explicit and recorded (docs/decisions.md#d1). */
export interface DecodingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  /** Anthropic extended thinking budget in tokens. */
  thinkingBudget?: number;
  /** vLLM / Qwen chat-template switches, e.g. `{ enable_thinking: false }`. */
  chatTemplateKwargs?: Record<string, unknown>;
  /** Other provider-specific body fields, passed through verbatim. */
  providerOptions?: Record<string, unknown>;
}

/**
 * A tool the model may call, with a JSON Schema for its input. Sent through the
 * provider's native tool-calling format (OpenAI `tools`, Anthropic `tools`).
 */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the tool's input (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** `auto`: the model may answer in prose; `required`: it must call a tool; `none`: no calls. */
export type ToolChoice = 'auto' | 'required' | 'none';

export interface ModelRequest {
  /** Model reference `provider:model[@baseURL]`, e.g. `openai:gpt-4.1-mini`, `sim:echo`. */
  model: string;
  messages: ChatMessage[];
  params: DecodingParams;
  /** Sample index: k independent samples of the same request are k cells. */
  sample: number;
  /**
   * Tools offered to the model (optional, additive): part of the cell key only when
   * present, so requests without tools keep the keys they always had.
   */
  tools?: ToolDefinition[];
  /** How the model may use `tools` (provider default when absent). Part of the key only when present. */
  toolChoice?: ToolChoice;
  /**
   * Draw salt: the unit of inference (a session, a position) this draw belongs to. Set only when
   * the same request arises in more than one unit, so each unit gets its own draw instead of
   * sharing one cached cell (docs/statistics.md, "Units share no draws"). Part of the key only
   * when present, so requests without it keep their keys; never sent to a provider.
   */
  unit?: string;
  /**
   * What a model's identity in the cell key is made of (never hashed itself): absent = provider
   * and model name (a `@baseURL` is recorded with the cell but not hashed); `url` = the whole
   * reference, base URL included (the rule before; config `identity: url`).
   */
  identity?: 'url';
}

/**
 * A tool call the model emitted. `input` is the parsed argument object; when the
 * arguments were not valid JSON, or named a tool that was not offered, `invalid`
 * says why and `input` holds what was received (the raw text for unparseable JSON).
 */
export interface ToolCall {
  id?: string;
  name: string;
  input: unknown;
  invalid?: 'unparseable' | 'unknown-tool' | 'invalid';
}

/** A call's token counts (the shape lives in core: sessions and the store sum the same fields). */
export type TokenUsage = TokenCounts;

export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other' | 'unknown';

export interface ModelResponse {
  text: string;
  /** Reasoning trace when the provider exposes one (kept apart from `text`). */
  reasoning?: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  latencyMs: number;
  /** Model id the provider says answered (may differ from the requested alias). */
  responseModel?: string;
  /** Settings the provider ignored, estimated usage, and similar notes about this call. */
  warnings?: string[];
  /** Tool calls the model emitted, in order (only when the request offered tools and the model called one). */
  toolCalls?: ToolCall[];
}

export interface GenerateOptions {
  signal?: AbortSignal;
  /** Called with each text delta when the adapter streams. */
  onDelta?: (delta: string) => void;
  /**
   * Routing key of the prompt cache for this call (OpenAI `prompt_cache_key`): the runner
   * sends one per prefix group. Not part of the cell key; other providers ignore it.
   */
  promptCacheKey?: string;
  /** Lifetime of Anthropic cache breakpoints: `5m` (provider default) or `1h`. Others ignore it. */
  cacheTtl?: '5m' | '1h';
  /** OpenAI `prompt_cache_retention` of this call (`in_memory` or `24h`); unset: the provider's default. Others ignore it. */
  promptCacheRetention?: 'in_memory' | '24h';
}

export interface ModelAdapter {
  /** The reference string this adapter was built from. */
  readonly ref: string;
  readonly provider: string;
  readonly modelId: string;
  generate(request: ModelRequest, options?: GenerateOptions): Promise<ModelResponse>;
}

export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});
