import type { AdapterOptions } from './ai-adapter.js';
import { resolveAiSdkTarget } from './ai-target.js';
import { ModelCallError } from './errors.js';
import { LocalAdapter, type LocalAdapterOptions } from './local-adapter.js';
import { getProvider, type ProviderSpec } from './providers.js';
import { type ModelRef, parseModelRef } from './ref.js';
import { SimAdapter } from './sim-adapter.js';
import './sim-echo.js';
import type { GenerateOptions, ModelAdapter, ModelRequest, ModelResponse } from './types.js';

export interface CreateAdapterOptions extends AdapterOptions {
  local?: LocalAdapterOptions;
}

/**
 * The adapter for a model reference `provider:model[@baseURL]`. Throws
 * InvalidArgumentError for a malformed reference or unknown provider, and
 * ModelCallError('auth') when a required API key variable is not set.
 */
export function createAdapter(ref: string, options: CreateAdapterOptions = {}): ModelAdapter {
  const parsed = parseModelRef(ref);
  const spec = getProvider(parsed.provider);
  if (spec === undefined) throw new Error(`unreachable: provider ${parsed.provider} parsed but not registered`);
  switch (spec.kind) {
    case 'sim':
      return new SimAdapter(ref, parsed.model);
    case 'local':
      return new LocalAdapter(ref, parsed.model, { env: options.env, ...options.local });
    case 'replay':
      // Built on first use, once the store has registered its factory.
      return new LazyAdapter(ref, 'replay', parsed.model, async () => {
        if (replayFactory === undefined) {
          throw new ModelCallError('config', `replay: no replay adapter is registered for ${ref} (load the store module: src/store/replay.ts)`, {
            provider: 'replay',
          });
        }
        return replayFactory(ref);
      });
    default:
      return new LazyAiSdkAdapter(ref, parsed, spec, options);
  }
}

/** Builds a `replay:` adapter; the store module provides it (see `registerReplayAdapter`). */
export type ReplayFactory = (ref: string) => ModelAdapter | Promise<ModelAdapter>;

let replayFactory: ReplayFactory | undefined;

/**
 * Installs the factory behind `replay:` references. The replay adapter reads a run
 * store, and the store depends on this module, so the dependency is injected the
 * other way: `src/store/replay.ts` registers itself when it is loaded (the run
 * edge, the CLI and the package index load it).
 */
export function registerReplayAdapter(factory: ReplayFactory): void {
  replayFactory = factory;
}

/** An adapter whose real one is built by `load` on the first call, and only once. */
class LazyAdapter implements ModelAdapter {
  private inner: Promise<ModelAdapter> | undefined;

  constructor(
    readonly ref: string,
    readonly provider: string,
    readonly modelId: string,
    private readonly load: () => Promise<ModelAdapter>,
  ) {}

  async generate(request: ModelRequest, options?: GenerateOptions): Promise<ModelResponse> {
    this.inner ??= this.load();
    return (await this.inner).generate(request, options);
  }
}

/**
 * HTTP providers: the reference, key and base URL are checked when the adapter is made (a missing
 * key still fails at once, before any call); the AI SDK and the provider's package load on the
 * first call, so commands that never call a model (reports, gate, the viewer) do not load them.
 */
class LazyAiSdkAdapter extends LazyAdapter {
  readonly baseURL: string;

  constructor(ref: string, parsed: ModelRef, spec: ProviderSpec, options: AdapterOptions) {
    super(ref, parsed.provider, parsed.model, () => import('./ai-adapter.js').then(({ AiSdkAdapter }) => new AiSdkAdapter(ref, parsed, spec, options)));
    this.baseURL = resolveAiSdkTarget(ref, parsed, spec, options.env ?? process.env).baseURL;
  }
}
