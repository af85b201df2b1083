import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { DEFAULT_MAX_TOKENS } from '../../models/defaults.js';
import { ModelCallError } from '../../models/errors.js';
import { checkedNumber } from '../options.js';
import { definedFields } from '../../core/copy-defined.js';
import type { ChatMessage, DecodingParams, ModelRequest } from '../../models/types.js';

interface AskOptions {
  system?: string;
  temperature?: string;
  topP?: string;
  maxTokens?: string;
  seed?: string;
  maxAttempts: string;
  timeout?: string;
  prices?: string;
  json?: boolean;
  /** true: --stream, false: --no-stream, undefined: stream when stdout is a terminal. */
  stream?: boolean;
}

/** Exit code when the model call itself failed (after retries); usage and config errors exit 2. */
export const ASK_CALL_FAILED_EXIT = 1;

/**
 * Whether `ask` prints tokens as they arrive: `--stream` / `--no-stream` decide, otherwise
 * only on a terminal. `--json` prints one object at the end, so it never streams.
 */
export function shouldStream(options: { stream?: boolean; json?: boolean }, stdoutIsTTY: boolean): boolean {
  if (options.json) {
    if (options.stream === true) {
      throw new InvalidArgumentError('--stream', 'cannot be combined with --json (the JSON object is printed once the answer is complete)');
    }
    return false;
  }
  return options.stream ?? stdoutIsTTY;
}

export function registerAsk(program: Command): void {
  program
    .command('ask')
    .description('send one prompt to a model (same adapters, retries and cost accounting as the experiments)')
    .argument('<model-ref>', 'model reference provider:model[@baseURL], e.g. openai:gpt-4.1-mini, ollama:qwen3:4b, sim:echo')
    .argument('<prompt>', 'the user message; "-" reads it from standard input')
    .option('--system <text>', 'system message')
    .option('--temperature <number>', 'sampling temperature (provider default when omitted)')
    .option('--top-p <number>', 'nucleus sampling probability')
    .option('--max-tokens <integer>', `most tokens the answer may use (default ${DEFAULT_MAX_TOKENS})`)
    .option('--seed <integer>', 'sampling seed, for providers that honour one')
    .option('--max-attempts <integer>', 'attempts in all, retries included', '3')
    .option('--timeout <seconds>', 'limit for one attempt')
    .option('--prices <file>', 'price file (JSON or YAML) overriding the built-in prices (also ECHOLENS_PRICES)')
    .option('--json', 'print a JSON object: text, usage, cost, latency, finish reason, model')
    .option('--stream', 'print the answer as it arrives (default when stdout is a terminal)')
    .option('--no-stream', 'print the answer only once it is complete, even on a terminal')
    .addHelpText(
      'after',
      [
        '',
        'API keys are read from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY,',
        'TOGETHER_API_KEY, VLLM_API_KEY, OPENAI_COMPATIBLE_API_KEY …) and are never printed.',
        'Exit codes: 0 answered; 1 the model call failed; 2 bad arguments, configuration or missing key.',
        '',
        'Streaming: on a terminal (or with --stream) tokens are printed as they arrive. If an attempt fails',
        'after part of the answer was printed and a retry starts, a notice on stderr says the partial answer',
        'is discarded and the complete answer follows on a new line. For exactly the final text in a pipe',
        'or file, leave out --stream (or use --json).',
        '',
        'Examples:',
        '  echolens ask sim:echo "hello"',
        '  echolens ask ollama:qwen3:4b "Name three rivers." --temperature 0 --max-tokens 200',
        '  echolens ask openai-compatible:my-model@http://127.0.0.1:8000/v1 "hi" --json',
        '  echolens ask anthropic:claude-sonnet-4-5 "Tell me a story." --stream | tee story.txt',
      ].join('\n'),
    )
    .action(async (modelRef: string, promptArg: string, options: AskOptions) => {
      await runAsk(modelRef, promptArg, options);
    });
}

async function runAsk(modelRef: string, promptArg: string, options: AskOptions): Promise<void> {
  const prompt = promptArg === '-' ? readFileSync(0, 'utf8') : promptArg;
  if (prompt.trim() === '') throw new InvalidArgumentError('prompt', 'is empty');
  const maxTokens = parseInteger('--max-tokens', options.maxTokens, 1) ?? DEFAULT_MAX_TOKENS;
  const sampling = {
    temperature: parseNumber('--temperature', options.temperature, 0, 2),
    topP: parseNumber('--top-p', options.topP, 0, 1),
    seed: parseInteger('--seed', options.seed, 0),
  };
  const params: DecodingParams = { maxTokens, ...definedFields(sampling, ['temperature', 'topP', 'seed']) };
  const maxAttempts = parseInteger('--max-attempts', options.maxAttempts, 1)!;
  const timeoutSeconds = parseNumber('--timeout', options.timeout, 0.001, 86_400);
  const streaming = shouldStream(options, process.stdout.isTTY === true);

  // Loaded here, not at start-up: the AI SDK is heavy and most commands never call a model.
  const [{ createAdapter }, { costOf, loadPriceTable }, { CallFailedError, callWithRetry }] = await Promise.all([
    import('../../models/create-adapter.js'),
    import('../../models/prices.js'),
    import('../../models/retry.js'),
    import('../../store/replay.js'), // registers the `replay:` adapter
  ]);
  // Read prices first: a malformed price file should fail before any money is spent.
  const prices = loadPriceTable(options.prices === undefined ? {} : { file: options.prices });
  const adapter = createAdapter(modelRef, timeoutSeconds === undefined ? {} : { timeoutMs: timeoutSeconds * 1000 });
  const messages: ChatMessage[] = [];
  if (options.system !== undefined) messages.push({ role: 'system', content: options.system });
  messages.push({ role: 'user', content: prompt });
  const request: ModelRequest = { model: modelRef, messages, params, sample: 0 };

  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once('SIGINT', onInterrupt);
  // What this attempt has printed so far (streaming only).
  let shown = '';
  const endShownLine = () => {
    if (shown !== '' && !shown.endsWith('\n')) process.stdout.write('\n');
  };
  try {
    const result = await callWithRetry(adapter, request, {
      policy: { maxAttempts },
      signal: controller.signal,
      ...(streaming
        ? {
            onDelta: (delta: string) => {
              shown += delta;
              process.stdout.write(delta);
            },
          }
        : {}),
      onRetry: (event) => {
        if (options.json) return;
        const wait = `retrying in ${(event.delayMs / 1000).toFixed(1)} s`;
        if (shown !== '') {
          endShownLine();
          process.stderr.write(
            `echolens: attempt ${event.attempt} failed (${event.error.kind}) after ${event.charsDiscarded} characters were printed; that partial answer is discarded, ${wait}, the answer restarts on the next line\n`,
          );
          shown = '';
        } else {
          process.stderr.write(`echolens: attempt ${event.attempt} failed (${event.error.kind}); ${wait}\n`);
        }
      },
    });
    const response = result.response;
    const costUsd = costOf(modelRef, result.usage, prices);
    if (options.json) {
      const out: Record<string, unknown> = {
        model: modelRef,
        responseModel: response.responseModel ?? null,
        text: response.text,
        finishReason: response.finishReason,
        usage: result.usage,
        costUsd,
        latencyMs: response.latencyMs,
        attempts: result.attempts,
        params,
        warnings: response.warnings ?? [],
      };
      if (response.reasoning !== undefined) out.reasoning = response.reasoning;
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      if (shown === '') {
        process.stdout.write(response.text.endsWith('\n') ? response.text : `${response.text}\n`);
      } else if (shown === response.text) {
        endShownLine();
      } else {
        // An adapter whose deltas disagree with its final text: the final text is what counts.
        endShownLine();
        process.stderr.write('echolens: the streamed text differs from the final answer; the final answer follows\n');
        process.stdout.write(response.text.endsWith('\n') ? response.text : `${response.text}\n`);
      }
      const u = result.usage;
      const parts = [
        response.responseModel ?? modelRef,
        `${u.inputTokens} in${u.cachedInputTokens > 0 ? ` (${u.cachedInputTokens} cached)` : ''} / ${u.outputTokens} out tokens`,
        costUsd === null ? 'cost unknown (no price for this model)' : `$${costUsd.toFixed(6)}`,
        `${(response.latencyMs / 1000).toFixed(2)} s`,
        response.finishReason,
      ];
      if (result.attempts > 1) parts.push(`${result.attempts} attempts`);
      process.stderr.write(`— ${parts.join(' · ')}\n`);
      for (const warning of response.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
    }
  } catch (error) {
    if (shown !== '') {
      endShownLine();
      process.stderr.write('echolens: the partial answer above is incomplete\n');
    }
    if (!(error instanceof ModelCallError)) throw error;
    // Missing keys and bad references are configuration errors: let the CLI print them (exit 2).
    if (error.kind === 'config' || (error.kind === 'auth' && !(error instanceof CallFailedError))) throw error;
    const attempts = error instanceof CallFailedError ? error.attempts : 1;
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({ model: modelRef, error: { kind: error.kind, message: error.message, status: error.status ?? null, attempts } }, null, 2)}\n`,
      );
    }
    process.stderr.write(`echolens: ${error.message} [${error.kind}, ${attempts} attempt${attempts === 1 ? '' : 's'}]\n`);
    if (error.hint) process.stderr.write(`hint: ${error.hint}\n`);
    process.exitCode = error.kind === 'aborted' ? 3 : ASK_CALL_FAILED_EXIT;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

function parseNumber(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  const ok = (n: number, text: string) => text.trim() !== '' && Number.isFinite(n) && n >= min && n <= max;
  return raw === undefined ? undefined : checkedNumber(flag, ok, `a number from ${min} to ${max}`)(raw);
}

function parseInteger(flag: string, raw: string | undefined, min: number): number | undefined {
  const ok = (n: number, text: string) => /^\s*\d+\s*$/.test(text) && Number.isSafeInteger(n) && n >= min;
  return raw === undefined ? undefined : checkedNumber(flag, ok, `a whole number ≥ ${min}`)(raw);
}
