import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { definedFields } from '../core/copy-defined.js';
import { DEFAULT_MAX_TOKENS } from './defaults.js';
import { ModelCallError } from './errors.js';
import { type FinishReason, type GenerateOptions, type ModelAdapter, type ModelRequest, type ModelResponse, ZERO_USAGE } from './types.js';

/**
 * `local:<file.gguf | hf:owner/repo[:quant]>`: an in-process GGUF model through
 * node-llama-cpp, an optional peer dependency (~730 MB with its binaries), so it
 * is imported only when a `local:` model is used.
 */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';
export const NODE_LLAMA_CPP_INSTALL = `npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`;

/** The part of node-llama-cpp's API this adapter uses. */
export interface LlamaModule {
  getLlama(options?: Record<string, unknown>): Promise<LlamaRuntime>;
  resolveModelFile(uri: string, options?: { directory?: string; download?: 'auto' | false; cli?: boolean }): Promise<string>;
  LlamaChatSession: new (options: { contextSequence: unknown; autoDisposeSequence?: boolean }) => LlamaSession;
}
interface LlamaRuntime {
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
}
interface LlamaModel {
  tokenize(text: string): unknown[];
  createContext(options?: Record<string, unknown>): Promise<{ getSequence(): unknown }>;
}
export type LlamaHistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };
interface LlamaSession {
  setChatHistory(history: LlamaHistoryItem[]): void;
  promptWithMeta(text: string, options: Record<string, unknown>): Promise<LlamaPromptResult>;
  dispose?(options?: { disposeSequence?: boolean }): void;
}

interface LlamaPromptResult {
  responseText: string;
  /** Strings are answer text; objects are segments (e.g. `{type:'segment', segmentType:'thought', text}`). */
  response?: unknown[];
  stopReason?: string;
}

export interface LocalAdapterOptions {
  /** Loads node-llama-cpp (injectable for tests). */
  importModule?: () => Promise<LlamaModule>;
  /** Where `hf:` models are looked up and downloaded (default: node-llama-cpp's own models directory). */
  modelsDir?: string;
  env?: Record<string, string | undefined>;
}

const defaultImport = async (): Promise<LlamaModule> => {
  // A variable specifier keeps TypeScript and bundlers from requiring the package.
  const specifier = 'node-llama-cpp';
  return (await import(specifier)) as LlamaModule;
};

export class LocalAdapter implements ModelAdapter {
  readonly ref: string;
  readonly provider = 'local';
  readonly modelId: string;
  private readonly options: LocalAdapterOptions;
  private loaded: Promise<{ module: LlamaModule; model: LlamaModel; sequence: unknown }> | undefined;
  /** One context sequence: calls run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(ref: string, model: string, options: LocalAdapterOptions = {}) {
    this.ref = ref;
    this.modelId = model;
    this.options = options;
  }

  generate(request: ModelRequest, options: GenerateOptions = {}): Promise<ModelResponse> {
    const run = this.queue.then(() => this.generateNow(request, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async generateNow(request: ModelRequest, options: GenerateOptions): Promise<ModelResponse> {
    if (options.signal?.aborted) throw new ModelCallError('aborted', 'local: call cancelled', { provider: 'local' });
    const { module, model, sequence } = await this.load();
    const messages = request.messages;
    const last = messages[messages.length - 1];
    if (last === undefined || last.role !== 'user') {
      throw new ModelCallError('bad_request', 'local: the last message must be a user message', { provider: 'local' });
    }
    const history = messages
      .slice(0, -1)
      .map((m): LlamaHistoryItem => (m.role === 'system' || m.role === 'user' ? { type: m.role, text: m.content } : { type: 'model', response: [m.content] }));
    // The sequence outlives the session, so a shared prefix stays evaluated between calls.
    const session = new module.LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
    session.setChatHistory(history);
    const params = request.params;
    const promptOptions: Record<string, unknown> = {
      maxTokens: params.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...definedFields(params, ['temperature', 'topP', 'topK', 'seed']),
    };
    if (params.stop !== undefined && params.stop.length > 0) promptOptions.customStopTriggers = params.stop;
    if (options.signal !== undefined) promptOptions.signal = options.signal;
    if (options.onDelta !== undefined) promptOptions.onTextChunk = options.onDelta;

    const started = performance.now();
    let result: LlamaPromptResult;
    try {
      result = await session.promptWithMeta(last.content, promptOptions);
    } catch (error) {
      if (options.signal?.aborted) throw new ModelCallError('aborted', 'local: call cancelled', { provider: 'local', cause: error });
      throw new ModelCallError('server', `local: generation failed: ${errorText(error)}`, { provider: 'local', cause: error });
    } finally {
      session.dispose?.({ disposeSequence: false });
    }
    const latencyMs = Math.round(performance.now() - started);
    const prompt = messages.map((m) => m.content).join('\n');
    const response: ModelResponse = {
      text: result.responseText,
      finishReason: STOP_REASONS.get(result.stopReason) ?? 'unknown',
      usage: {
        ...ZERO_USAGE,
        // Tokenizer counts of the message texts: the chat template's own tokens are not included.
        inputTokens: model.tokenize(prompt).length,
        outputTokens: model.tokenize(result.responseText).length,
      },
      latencyMs,
      responseModel: `local:${this.modelId}`,
      warnings: ['local: token usage is counted with the model tokenizer over message texts (chat-template tokens excluded)'],
    };
    const reasoning = thoughtText(result.response);
    if (reasoning !== '') response.reasoning = reasoning;
    if (result.responseText.trim() === '') {
      throw new ModelCallError('empty', 'local: the model returned no text', { provider: 'local', response });
    }
    return response;
  }

  private load() {
    this.loaded ??= this.loadOnce();
    // A failed load is not cached: the next call tries again (e.g. after installing the package).
    this.loaded.catch(() => {
      this.loaded = undefined;
    });
    return this.loaded;
  }

  private async loadOnce() {
    const module = await importLlama(this.options.importModule ?? defaultImport);
    const modelPath = await this.resolveModelPath(module);
    let model: LlamaModel;
    try {
      const llama = await module.getLlama();
      model = await llama.loadModel({ modelPath });
    } catch (error) {
      throw new ModelCallError('config', `local: could not load ${modelPath}: ${errorText(error)}`, {
        provider: 'local',
        cause: error,
      });
    }
    const context = await model.createContext();
    return { module, model, sequence: context.getSequence() };
  }

  private async resolveModelPath(module: LlamaModule): Promise<string> {
    const env = this.options.env ?? process.env;
    const directory = this.options.modelsDir ?? env.ECHOLENS_MODELS_DIR;
    if (this.modelId.startsWith('hf:')) {
      try {
        return await module.resolveModelFile(this.modelId, {
          ...(directory === undefined ? {} : { directory }),
          download: 'auto',
          cli: false,
        });
      } catch (error) {
        throw new ModelCallError(
          'not_found',
          `local: ${this.modelId} is not on disk${directory === undefined ? '' : ` in ${directory}`} and could not be downloaded (${errorText(error)})`,
          {
            provider: 'local',
            cause: error,
            hint: `download it where network is available: npx node-llama-cpp pull ${directory === undefined ? '' : `--dir ${directory} `}${this.modelId}`,
          },
        );
      }
    }
    const path = resolve(this.modelId);
    if (!existsSync(path)) {
      throw new ModelCallError('not_found', `local: no model file at ${path}`, {
        provider: 'local',
        hint: 'give a .gguf file path or a Hugging Face URI such as local:hf:Qwen/Qwen3-0.6B-GGUF:Q8_0',
      });
    }
    return path;
  }
}

async function importLlama(importModule: () => Promise<LlamaModule>): Promise<LlamaModule> {
  try {
    return await importModule();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || /Cannot find (package|module)/i.test(errorText(error));
    throw new ModelCallError(
      'config',
      missing
        ? `local: models need the optional package node-llama-cpp, which is not installed. Install it with: ${NODE_LLAMA_CPP_INSTALL}`
        : `local: node-llama-cpp failed to load (${errorText(error)}); reinstall it with: ${NODE_LLAMA_CPP_INSTALL}`,
      { provider: 'local', cause: error },
    );
  }
}

/** Thinking segments (e.g. Qwen3 `<think>`) that node-llama-cpp keeps apart from the answer text. */
function thoughtText(response: unknown[] = []): string {
  return response
    .map((item) => {
      const segment = item as { type?: unknown; segmentType?: unknown; text?: unknown } | null;
      return segment?.type === 'segment' && segment.segmentType === 'thought' && typeof segment.text === 'string' ? segment.text : '';
    })
    .join('');
}

const STOP_REASONS = new Map<string | undefined, FinishReason>([
  ['eogToken', 'stop'],
  ['stopGenerationTrigger', 'stop'],
  ['customStopTrigger', 'stop'],
  ['maxTokens', 'length'],
  ['functionCalls', 'tool-calls'],
]);

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
