import { type AdapterOptions, AiSdkAdapter } from './ai-adapter.js';
import { ModelCallError } from './errors.js';
import { LocalAdapter, type LocalAdapterOptions } from './local-adapter.js';
import { getProvider } from './providers.js';
import { parseModelRef } from './ref.js';
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
      return new LazyReplayAdapter(ref, parsed.model);
    default:
      return new AiSdkAdapter(ref, parsed, spec, options);
  }
}

type ReplayFactory = (ref: string) => ModelAdapter | Promise<ModelAdapter>;

/**
 * `replay:` adapters live in the store module; they are loaded on first use so
 * the model layer does not depend on the store at import time.
 */
class LazyReplayAdapter implements ModelAdapter {
  readonly ref: string;
  readonly provider = 'replay';
  readonly modelId: string;
  private inner: Promise<ModelAdapter> | undefined;

  constructor(ref: string, modelId: string) {
    this.ref = ref;
    this.modelId = modelId;
  }

  async generate(request: ModelRequest, options?: GenerateOptions): Promise<ModelResponse> {
    this.inner ??= loadReplay(this.ref);
    return (await this.inner).generate(request, options);
  }
}

async function loadReplay(ref: string): Promise<ModelAdapter> {
  const specifier = '../store/replay.js';
  let factory: ReplayFactory | undefined;
  try {
    const module = (await import(specifier)) as { createReplayAdapter?: ReplayFactory };
    factory = module.createReplayAdapter;
  } catch (error) {
    throw new ModelCallError('config', `replay: the replay adapter could not be loaded (${String(error)})`, {
      provider: 'replay',
      cause: error,
    });
  }
  if (typeof factory !== 'function') {
    throw new ModelCallError('config', 'replay: this build has no replay adapter (store/replay.js lacks createReplayAdapter)', {
      provider: 'replay',
    });
  }
  return factory(ref);
}
