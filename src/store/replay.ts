import { existsSync } from 'node:fs';
import { registerReplayAdapter } from '../models/create-adapter.js';
import { ModelCallError } from '../models/errors.js';
import type { FinishReason, ModelAdapter, ModelRequest, ModelResponse } from '../models/types.js';
import { contentKey } from './keys.js';
import { RunStore } from './run-store.js';

/**
 * `replay:<run.db>` answers a request from a previous run's store: the cell
 * with the same messages, parameters and sample index, whatever model gave it.
 * `replay:<run.db>#<model ref>` picks one model when several answered the same
 * content. Replayed answers carry the original model as `responseModel` and the
 * lookup time as latency; nothing is called.
 */
export function createReplayAdapter(ref: string): ModelAdapter {
  if (!ref.startsWith('replay:')) {
    throw new ModelCallError('config', `not a replay reference: ${ref} (expected replay:<run.db>[#<model ref>])`);
  }
  const body = ref.slice('replay:'.length);
  const hash = body.indexOf('#');
  const file = hash >= 0 ? body.slice(0, hash) : body;
  const model = hash >= 0 ? body.slice(hash + 1) : undefined;
  if (file === '') throw new ModelCallError('config', `replay reference needs a store path: ${ref}`);
  if (model !== undefined && model === '') throw new ModelCallError('config', `empty model after "#" in ${ref}`);
  if (file !== ':memory:' && !existsSync(file)) {
    throw new ModelCallError('config', `replay store not found: ${file}`, { provider: 'replay' });
  }
  let store: RunStore | undefined;
  const openStore = (): RunStore => {
    if (!store) {
      try {
        store = RunStore.open(file, { readonly: true });
      } catch (error) {
        throw new ModelCallError('config', `cannot open replay store ${file}: ${(error as Error).message}`, {
          provider: 'replay',
          cause: error,
        });
      }
    }
    return store;
  };

  return {
    ref,
    provider: 'replay',
    modelId: file,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const started = performance.now();
      const key = contentKey(request);
      const matches = await openStore().findByContent(key, model);
      if (matches.length === 0) {
        throw new ModelCallError(
          'not_found',
          `cell not in replay store ${file}: no finished cell has these messages, parameters and sample ${request.sample}` +
            `${model ? ` for ${model}` : ''} (content key ${key.slice(0, 12)})`,
          { provider: 'replay' },
        );
      }
      const models = [...new Set(matches.map((match) => match.model))].sort();
      if (models.length > 1) {
        throw new ModelCallError(
          'config',
          `replay store ${file} has this cell from ${models.length} models (${models.join(', ')}); name one as replay:${file}#<model>`,
          { provider: 'replay' },
        );
      }
      const { result } = matches[0]!;
      return {
        text: result.text ?? '',
        ...(result.reasoning !== null ? { reasoning: result.reasoning } : {}),
        finishReason: (result.finishReason ?? 'unknown') as FinishReason,
        usage: result.usage,
        latencyMs: performance.now() - started,
        responseModel: models[0]!,
        ...(result.toolCalls ? { toolCalls: result.toolCalls } : {}),
      };
    },
  };
}

// `replay:` references resolve through this module once it is loaded (injection keeps
// src/models free of any import of the store).
registerReplayAdapter(createReplayAdapter);
