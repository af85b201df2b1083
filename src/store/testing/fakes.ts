import { sha256Hex } from '../../core/canonical-json.js';
import type { ModelAdapter, ModelRequest, ModelResponse, TokenUsage } from '../../models/types.js';
import { ZERO_USAGE } from '../../models/types.js';
import { cellKey } from '../keys.js';
import type { CellOutcome } from '../run-store-common.js';
import type { CellSpec } from '../types.js';

/**
 * In-process fake models for tests and benchmarks: deterministic answers, call
 * counting per cell key, concurrency tracking, optional delays. No network.
 */

export function fakeResponse(text: string, usage: Partial<TokenUsage> = {}, latencyMs = 0): ModelResponse {
  return { text, finishReason: 'stop', usage: { ...ZERO_USAGE, ...usage }, latencyMs };
}

/** A deterministic answer that depends on the whole request (so a wrong cell shows). */
export function answerFor(request: ModelRequest): string {
  return `answer ${sha256Hex(JSON.stringify([request.model, request.messages, request.params, request.sample])).slice(0, 16)}`;
}

export function usageFor(request: ModelRequest): TokenUsage {
  let chars = 0;
  for (const message of request.messages) chars += message.content.length;
  return { ...ZERO_USAGE, inputTokens: Math.ceil(chars / 4) + 3, outputTokens: 7 };
}

export type Responder = (request: ModelRequest, call: number) => ModelResponse | Promise<ModelResponse>;

export interface FakeModelsOptions {
  /** What a call returns (default: `answerFor` with `usageFor`). May throw ModelCallErrors. */
  respond?: Responder;
  /** Per-call delay in ms (default 0: answer on the next microtask). */
  delayMs?: number | ((request: ModelRequest) => number);
  /** Called when a call starts, with its cell key (e.g. to append to a log). */
  onCall?: (key: string, request: ModelRequest) => void;
}

/** A family of fake adapters sharing counters: `adapterFor` is what the runner takes. */
export class FakeModels {
  readonly calls = new Map<string, number>();
  readonly order: string[] = [];
  totalCalls = 0;
  active = 0;
  maxActive = 0;
  readonly activeByProvider = new Map<string, number>();
  readonly maxActiveByProvider = new Map<string, number>();
  private readonly options: FakeModelsOptions;

  constructor(options: FakeModelsOptions = {}) {
    this.options = options;
  }

  readonly adapterFor = (ref: string): ModelAdapter => {
    const colon = ref.indexOf(':');
    const provider = colon > 0 ? ref.slice(0, colon) : ref;
    return {
      ref,
      provider,
      modelId: ref.slice(colon + 1),
      generate: (request) => this.generate(provider, request),
    };
  };

  private async generate(provider: string, request: ModelRequest): Promise<ModelResponse> {
    const key = cellKey(request);
    const call = (this.calls.get(key) ?? 0) + 1;
    this.calls.set(key, call);
    this.order.push(key);
    this.totalCalls += 1;
    this.options.onCall?.(key, request);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    const providerActive = (this.activeByProvider.get(provider) ?? 0) + 1;
    this.activeByProvider.set(provider, providerActive);
    this.maxActiveByProvider.set(provider, Math.max(this.maxActiveByProvider.get(provider) ?? 0, providerActive));
    try {
      const delay = typeof this.options.delayMs === 'function' ? this.options.delayMs(request) : (this.options.delayMs ?? 0);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      else await Promise.resolve();
      const respond = this.options.respond ?? ((r: ModelRequest) => fakeResponse(answerFor(r), usageFor(r)));
      return await respond(request, call);
    } finally {
      this.active -= 1;
      this.activeByProvider.set(provider, (this.activeByProvider.get(provider) ?? 1) - 1);
    }
  }
}

/** A plan of `n` distinct cells on one model, labelled by index. */
export function makeSpecs(n: number, model = 'fake:m', extra: Partial<ModelRequest['params']> = {}): CellSpec[] {
  return Array.from({ length: n }, (_, index) => ({
    request: {
      model,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: `Question number ${index}?` },
      ],
      params: { temperature: 0, maxTokens: 64, ...extra },
      sample: 0,
    },
    labels: { index, arm: index % 2 === 0 ? 'real' : 'filler' },
  }));
}

export const TEST_MANIFEST = {
  experiment: 'test',
  config: { note: 'fixture' },
  seed: 42,
  versions: { echolens: 'test' },
  gitCommit: null,
};

/** A settled cell as a store test records it: done after one attempt, with small usage and cost; `over` changes any field. */
export function testOutcome(over: Partial<CellOutcome> = {}): CellOutcome {
  return {
    status: 'done',
    attempts: 1,
    text: 'x',
    reasoning: null,
    finishReason: 'stop',
    responseModel: null,
    usage: { ...ZERO_USAGE, inputTokens: 5, outputTokens: 2 },
    latencyMs: 12,
    costUsd: 0.001,
    errorClass: null,
    errorMessage: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    ...over,
  };
}
