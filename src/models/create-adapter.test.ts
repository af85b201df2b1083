import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import '../store/replay.js';
import { RunStore } from '../store/run-store.js';
import { runCells } from '../store/runner.js';
import { TEST_MANIFEST } from '../store/testing/fakes.js';
import { createAdapter } from './create-adapter.js';
import { type LlamaModule, LocalAdapter, NODE_LLAMA_CPP_INSTALL } from './local-adapter.js';
import { deriveSimSeed } from './sim-adapter.js';
import { registerSimProfile } from './sim-registry.js';
import { rejectionOf, thrownBy } from './testing/harness.js';
import type { ModelRequest } from './types.js';

const ask = (model: string, content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  messages: [{ role: 'user', content }],
  params: {},
  sample: 0,
  ...extra,
});

/** A system prompt, then turns alternating user / assistant (the first and last are the user's). */
const dialogue = (model: string, system: string, turns: string[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  messages: [{ role: 'system', content: system }, ...turns.map((content, i) => ({ role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content }))],
  params: {},
  sample: 0,
  ...extra,
});

describe('createAdapter', () => {
  it('rejects unknown providers, listing the valid ones', () => {
    expect(() => createAdapter('nosuch:small')).toThrow(InvalidArgumentError);
    expect(() => createAdapter('nosuch:small')).toThrow(
      /openai, anthropic, vllm, ollama, llamacpp, lmstudio, openrouter, together, azure, mistral, groq, deepseek, google, vertex, bedrock, openai-compatible, local, sim, replay/,
    );
  });

  it.each([
    ['openai:gpt-4o', 'OPENAI_API_KEY'],
    ['anthropic:claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
    ['openrouter:a/b', 'OPENROUTER_API_KEY'],
    ['together:a/b', 'TOGETHER_API_KEY'],
  ])('%s without a key names %s', (ref, variable) => {
    const error = thrownBy(() => createAdapter(ref, { env: {} }));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain(variable);
  });

  it('keyless local servers need no key', () => {
    for (const ref of ['vllm:m', 'ollama:qwen3:4b', 'llamacpp:m', 'lmstudio:m', 'openai-compatible:m@http://127.0.0.1:9/v1']) {
      expect(createAdapter(ref, { env: {} }).ref).toBe(ref);
    }
  });

  // The documented default base URLs, and OPENAI_BASE_URL (which a base URL in the reference overrides).
  it.each([
    ['openai:gpt-4o', {}, 'https://api.openai.com/v1'],
    ['openai:gpt-4o', { OPENAI_BASE_URL: 'http://127.0.0.1:5000/v1/' }, 'http://127.0.0.1:5000/v1'],
    ['openai:gpt-4o@http://127.0.0.1:6000/v1', { OPENAI_BASE_URL: 'http://127.0.0.1:5000/v1' }, 'http://127.0.0.1:6000/v1'],
    ['vllm:m', {}, 'http://127.0.0.1:8000/v1'],
    ['ollama:m', {}, 'http://127.0.0.1:11434/v1'],
    ['llamacpp:m', {}, 'http://127.0.0.1:8080/v1'],
    ['lmstudio:m', {}, 'http://127.0.0.1:1234/v1'],
    ['openrouter:m', {}, 'https://openrouter.ai/api/v1'],
    ['together:m', {}, 'https://api.together.xyz/v1'],
  ])('%s with %o uses the base URL %s', (ref, env: Record<string, string>, expected) => {
    const adapter = createAdapter(ref, { env: { OPENAI_API_KEY: 'k', OPENROUTER_API_KEY: 'k', TOGETHER_API_KEY: 'k', ...env } });
    expect((adapter as unknown as { baseURL: string }).baseURL).toBe(expected);
  });
});

describe('sim: adapter', () => {
  it('sim:echo answers with the last user message', async () => {
    const adapter = createAdapter('sim:echo');
    const response = await adapter.generate(dialogue('sim:echo', 'sys', ['first', 'ok', 'the last one']));
    expect(response.text).toBe('the last one');
    expect(response.latencyMs).toBe(0);
    expect(response.finishReason).toBe('stop');
    expect(response.usage.outputTokens).toBeGreaterThan(0);
    expect(response.usage.inputTokens).toBeGreaterThan(response.usage.outputTokens);
  });

  it('passes a seed derived from params.seed and the sample index', async () => {
    const seen: number[] = [];
    registerSimProfile({
      name: 'test-seed-recorder',
      description: 'simulation used by tests: records seeds',
      answer(_request, seed) {
        seen.push(seed);
        return { text: `seed ${seed}`, reasoning: 'r' };
      },
    });
    const adapter = createAdapter('sim:test-seed-recorder');
    const a = await adapter.generate(ask('sim:test-seed-recorder', 'x', { params: { seed: 3 }, sample: 0 }));
    const b = await adapter.generate(ask('sim:test-seed-recorder', 'x', { params: { seed: 3 }, sample: 1 }));
    const a2 = await adapter.generate(ask('sim:test-seed-recorder', 'x', { params: { seed: 3 }, sample: 0 }));
    await adapter.generate(ask('sim:test-seed-recorder', 'x', { sample: 0 }));
    expect(seen).toEqual([deriveSimSeed(3, 0), deriveSimSeed(3, 1), deriveSimSeed(3, 0), deriveSimSeed(0, 0)]);
    expect(a.text).toBe(a2.text);
    expect(a.text).not.toBe(b.text);
    expect(a.reasoning).toBe('r');
    expect(a.usage.reasoningTokens).toBeGreaterThan(0);
  });

  it('deriveSimSeed spreads seeds and samples', () => {
    const values = new Set<number>();
    for (let seed = 0; seed < 20; seed++) for (let sample = 0; sample < 20; sample++) values.add(deriveSimSeed(seed, sample));
    expect(values.size).toBe(400);
  });

  it('an unknown profile lists the registered ones', () => {
    expect(() => createAdapter('sim:nope')).toThrow(/no simulation profile "nope"; registered profiles: .*echo/);
  });

  it('an empty simulated answer is an empty failure, like a real model', async () => {
    const error = await rejectionOf(createAdapter('sim:echo').generate(ask('sim:echo', '   ')));
    expect(error.kind).toBe('empty');
    expect(error.response?.usage.inputTokens).toBeGreaterThan(0);
  });
});

describe('local: adapter', () => {
  it('without node-llama-cpp installed, says exactly how to install it', async () => {
    // This repository does not install the optional peer; guard in case someone does.
    if (existsSync(join(process.cwd(), 'node_modules', 'node-llama-cpp'))) return;
    const adapter = createAdapter('local:hf:Qwen/Qwen3-0.6B-GGUF:Q8_0');
    const error = await rejectionOf(adapter.generate(ask('local:x', 'hi')));
    expect(error.kind).toBe('config');
    expect(error.message).toContain(NODE_LLAMA_CPP_INSTALL);
    expect(NODE_LLAMA_CPP_INSTALL).toBe('npm install node-llama-cpp@3.21.1');
    expect(error.stack).toBeDefined();
    expect(error.message).not.toMatch(/\n\s+at /);
  });

  const fakeModule = (download: (uri: string) => Promise<string>): LlamaModule & { prompts: unknown[] } => {
    const prompts: unknown[] = [];
    return {
      prompts,
      getLlama: async () => ({
        loadModel: async () => ({
          tokenize: (text: string) => text.split(/\s+/).filter(Boolean),
          createContext: async () => ({ getSequence: () => ({}) }),
        }),
      }),
      resolveModelFile: download,
      LlamaChatSession: class {
        history: unknown[] = [];
        setChatHistory(history: unknown[]) {
          this.history = history;
        }
        async promptWithMeta(text: string, options: Record<string, unknown>) {
          prompts.push({ history: this.history, text, options });
          (options.onTextChunk as ((t: string) => void) | undefined)?.('local ');
          (options.onTextChunk as ((t: string) => void) | undefined)?.('answer');
          return {
            responseText: 'local answer',
            response: [{ type: 'segment', segmentType: 'thought', text: 'hmm', ended: true }, 'local answer'],
            stopReason: 'maxTokens',
          };
        }
      },
    };
  };

  it('a model that is not on disk and cannot be downloaded gives a clear message', async () => {
    const module = fakeModule(async () => {
      throw new Error('getaddrinfo ENOTFOUND huggingface.co');
    });
    const adapter = new LocalAdapter('local:hf:a/b:Q4', 'hf:a/b:Q4', { importModule: async () => module, modelsDir: '/tmp/models' });
    const error = await rejectionOf(adapter.generate(ask('local:hf:a/b:Q4', 'hi')));
    expect(error.kind).toBe('not_found');
    expect(error.message).toMatch(/hf:a\/b:Q4 is not on disk in \/tmp\/models and could not be downloaded/);
    expect(error.hint).toMatch(/node-llama-cpp pull/);
  });

  it('a missing GGUF file path is not_found', async () => {
    const module = fakeModule(async () => '/unused');
    const adapter = new LocalAdapter('local:/no/such/model.gguf', '/no/such/model.gguf', { importModule: async () => module });
    const error = await rejectionOf(adapter.generate(ask('local:/no/such/model.gguf', 'hi')));
    expect(error.kind).toBe('not_found');
    expect(error.message).toContain('/no/such/model.gguf');
  });

  it('maps history, decoding parameters and deltas onto a chat session', async () => {
    const module = fakeModule(async () => '/models/a.gguf');
    const adapter = new LocalAdapter('local:hf:a/b', 'hf:a/b', { importModule: async () => module });
    const deltas: string[] = [];
    const response = await adapter.generate(
      dialogue('local:hf:a/b', 'be kind', ['one two', 'three', 'four five six'], {
        params: { temperature: 0.3, topK: 7, topP: 0.8, seed: 5, maxTokens: 12, stop: ['\n\n'] },
      }),
      { onDelta: (d) => deltas.push(d) },
    );
    expect(response.text).toBe('local answer');
    expect(response.finishReason).toBe('length');
    expect(response.reasoning).toBe('hmm');
    expect(deltas.join('')).toBe('local answer');
    expect(response.usage.outputTokens).toBe(2);
    expect(response.usage.inputTokens).toBe(8);
    const call = module.prompts[0] as { history: unknown[]; text: string; options: Record<string, unknown> };
    expect(call.text).toBe('four five six');
    expect(call.history).toEqual([
      { type: 'system', text: 'be kind' },
      { type: 'user', text: 'one two' },
      { type: 'model', response: ['three'] },
    ]);
    expect(call.options).toMatchObject({ temperature: 0.3, topK: 7, topP: 0.8, seed: 5, maxTokens: 12, customStopTriggers: ['\n\n'] });
  });
});

describe('replay: adapter', () => {
  it('replays an answer recorded in a run store, through createAdapter', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'echolens-models-replay-')), 'run.db');
    const recorded = ask('sim:echo', 'remember this answer');
    const store = RunStore.open(file);
    await runCells(store, await store.createRun(TEST_MANIFEST), [{ request: recorded, labels: {} }], {
      adapterFor: (ref: string) => createAdapter(ref),
    });
    await store.close();
    const ref = `replay:${file}`;
    const replayed = await createAdapter(ref).generate({ ...recorded, model: ref });
    expect(replayed.text).toBe('remember this answer');
    expect(replayed.responseModel).toBe('sim:echo');
  });

  it('is created lazily and delegates to the factory the store module registers', async () => {
    const adapter = createAdapter('replay:/tmp/none.db');
    expect(adapter.provider).toBe('replay');
    expect(adapter.modelId).toBe('/tmp/none.db');
    const error = await rejectionOf(adapter.generate(ask('replay:/tmp/none.db', 'hi')));
    expect(error.kind).toBe('config');
    expect(error.message).toContain('/tmp/none.db');
  });
});
