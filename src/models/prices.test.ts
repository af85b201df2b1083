import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import type { CellSpec } from '../store/types.js';
import { estimateCells } from './estimate.js';
import { builtInPriceTable, costOf, findPrice, loadPriceTable, parsePriceTable, type PriceTable } from './prices.js';
import type { TokenUsage } from './types.js';

const usage = (u: Partial<TokenUsage>): TokenUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  ...u,
});

describe('built-in price table', () => {
  it('loads, is dated and names a source for every model', () => {
    const table = builtInPriceTable();
    expect(table.checked).toMatch(/^2026-\d\d-\d\d$/);
    expect(table.models.length).toBeGreaterThan(10);
    for (const m of table.models) expect(m.source, `${m.provider}:${m.model}`).toBeTruthy();
  });

  it('matches dated snapshots and -latest aliases to their base entry', () => {
    const table = builtInPriceTable();
    expect(findPrice('anthropic:claude-sonnet-4-5-20250929', table)?.model).toBe('claude-sonnet-4-5');
    expect(findPrice('openai:gpt-4.1-mini-2025-04-14', table)?.model).toBe('gpt-4.1-mini');
    expect(findPrice('anthropic:claude-3-5-haiku-latest', table)?.model).toBe('claude-3-5-haiku');
    expect(findPrice('openai:gpt-4.1-mini@http://127.0.0.1:9/v1', table)?.model).toBe('gpt-4.1-mini');
    // Same id, other provider: not the same price.
    expect(findPrice('openrouter:gpt-4.1-mini', table)).toBeUndefined();
  });
});

describe('costOf', () => {
  const table: PriceTable = {
    freeProviders: ['sim', 'ollama'],
    models: [
      { provider: 'anthropic', model: 'claude-x', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
      { provider: 'openai', model: 'gpt-y', input: 2, output: 8, cachedInput: 0.5 },
      { provider: 'together', model: 'plain', input: 1, output: 1 },
    ],
  };

  it('prices plain, cached and cache-written input and output separately', () => {
    // 10k input of which 6k cache reads and 2k cache writes; 1k output.
    const dollars = costOf('anthropic:claude-x', usage({ inputTokens: 10_000, cachedInputTokens: 6_000, cacheWriteTokens: 2_000, outputTokens: 1_000 }), table);
    expect(dollars).toBeCloseTo((2_000 * 3 + 6_000 * 0.3 + 2_000 * 3.75 + 1_000 * 15) / 1e6, 12);
  });

  it('OpenAI cached tokens are part of prompt tokens', () => {
    const dollars = costOf('openai:gpt-y', usage({ inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 500_000 }), table);
    expect(dollars).toBeCloseTo(600_000 * 2e-6 + 400_000 * 0.5e-6 + 500_000 * 8e-6, 10);
  });

  it('missing cache prices fall back to the input price', () => {
    expect(costOf('together:plain', usage({ inputTokens: 100, cachedInputTokens: 50, outputTokens: 10 }), table)).toBeCloseTo(110e-6, 15);
  });

  it('unknown models cost null, never 0; free providers cost exactly 0', () => {
    expect(costOf('openai:gpt-unknown', usage({ inputTokens: 10, outputTokens: 10 }), table)).toBeNull();
    expect(costOf('sim:echo', usage({ inputTokens: 10, outputTokens: 10 }), table)).toBe(0);
    expect(costOf('ollama:qwen3:4b', usage({ inputTokens: 10, outputTokens: 10 }), table)).toBe(0);
  });

  it('never counts more cached tokens than input tokens', () => {
    const dollars = costOf('anthropic:claude-x', usage({ inputTokens: 100, cachedInputTokens: 500 }), table);
    expect(dollars).toBeCloseTo(100 * 0.3e-6, 15);
  });

  it('uses the built-in table by default', () => {
    expect(costOf('openai:gpt-4o-mini', usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 }))).toBeCloseTo(0.75, 10);
  });
});

describe('price files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-prices-'));
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('a YAML override replaces and extends the built-in table', () => {
    const file = write(
      'prices.yaml',
      [
        'checked: "2026-12-01"',
        'freeProviders: [lmstudio]',
        'models:',
        '  - { provider: openai, model: gpt-4o-mini, input: 1, output: 2 }',
        '  - provider: openrouter',
        '    model: qwen/qwen3-235b',
        '    input: 0.2',
        '    output: 0.6',
      ].join('\n'),
    );
    const table = loadPriceTable({ file });
    expect(findPrice('openai:gpt-4o-mini', table)).toMatchObject({ input: 1, output: 2 });
    expect(findPrice('openrouter:qwen/qwen3-235b', table)?.output).toBe(0.6);
    expect(findPrice('openai:gpt-4.1', table)?.input).toBe(2);
    expect(table.checked).toBe('2026-12-01');
  });

  it('ECHOLENS_PRICES names the override file', () => {
    const file = write('env.json', JSON.stringify({ models: [{ provider: 'together', model: 'x', input: 1, output: 1 }] }));
    expect(findPrice('together:x', loadPriceTable({ env: { ECHOLENS_PRICES: file } }))).toBeDefined();
  });

  const malformed: Array<[string, string, { line: number; field?: string; message: RegExp }]> = [
    [
      'negative.json',
      '{\n  "models": [\n    { "provider": "openai", "model": "m", "input": 1, "output": 2 },\n    { "provider": "openai", "model": "n", "input": -1, "output": 2 }\n  ]\n}',
      { line: 4, field: 'models.1.input', message: />=0|too small/i },
    ],
    ['missing.yaml', 'models:\n  - provider: openai\n    model: m\n    input: 1\n', { line: 2, field: 'models.0.output', message: /expected number/i }],
    [
      'typo.yaml',
      'models:\n  - provider: openai\n    model: m\n    input: 1\n    output: 2\n    outptu: 3\n',
      { line: 2, field: 'models.0', message: /outptu/ },
    ],
    ['syntax.json', '{\n  "models": [\n    { "provider": "openai", \n  ]\n}', { line: 4, message: /not valid JSON\/YAML/ }],
  ];
  it.each(malformed)('%s → InputError with file, line and field', (name, text, expected) => {
    const file = write(name, text);
    let error: unknown;
    try {
      loadPriceTable({ file });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    const e = error as InputError;
    expect(e.file).toBe(file);
    expect(e.line).toBe(expected.line);
    if (expected.field !== undefined) expect(e.field).toBe(expected.field);
    expect(e.message).toMatch(expected.message);
    expect(e.message.startsWith(`${file}:${expected.line}: `)).toBe(true);
  });

  it('an unreadable file is an InputError naming it', () => {
    expect(() => loadPriceTable({ file: join(dir, 'absent.json') })).toThrow(/absent\.json: cannot read the price file \(ENOENT\)/);
  });

  it('parsePriceTable is pure and accepts JSON', () => {
    const table = parsePriceTable('{"freeProviders":["vllm"],"models":[]}', 'inline.json');
    expect(table).toEqual({ freeProviders: ['vllm'], models: [] });
  });
});

describe('estimateCells', () => {
  const prices: PriceTable = {
    freeProviders: ['sim'],
    models: [{ provider: 'openai', model: 'gpt-y', input: 2, output: 8 }],
  };
  const cell = (model: string, content: string, params: CellSpec['request']['params'], sample = 0): CellSpec => ({
    request: { model, messages: [{ role: 'user', content }], params, sample },
    labels: {},
  });

  it('counts unique cells, tokens, and a low/high dollar range', () => {
    const specs = [
      cell('openai:gpt-y', 'hello world', { maxTokens: 100 }, 0),
      cell('openai:gpt-y', 'hello world', { maxTokens: 100 }, 1),
      // Same request as the first: runs once.
      cell('openai:gpt-y', 'hello world', { maxTokens: 100 }, 0),
      cell('sim:echo', 'hello world', { maxTokens: 1000 }, 0),
      cell('anthropic:claude-unknown', 'hello world', { maxTokens: 500, thinkingBudget: 1000 }, 0),
    ];
    const estimate = estimateCells(specs, prices, { expectedOutputTokens: 50 });
    // "hello world" is 2 o200k tokens; +4 per message +3 per request.
    const perCell = 2 + 4 + 3;
    expect(estimate.cells).toBe(4);
    expect(estimate.duplicates).toBe(1);
    expect(estimate.inputTokens).toBe(4 * perCell);
    expect(estimate.outputTokens.max).toBe(100 + 100 + 1000 + 1500);
    expect(estimate.outputTokens.expected).toBe(50 * 4);
    const gpt = estimate.perModel.find((m) => m.model === 'openai:gpt-y')!;
    expect(gpt.dollars!.low).toBeCloseTo((2 * perCell * 2 + 2 * 50 * 8) / 1e6, 12);
    expect(gpt.dollars!.high).toBeCloseTo((2 * perCell * 2 + 2 * 100 * 8) / 1e6, 12);
    expect(estimate.perModel.find((m) => m.model === 'sim:echo')!.dollars).toEqual({ low: 0, high: 0 });
    expect(estimate.unpricedModels).toEqual(['anthropic:claude-unknown']);
    expect(estimate.unpricedCells).toBe(1);
    expect(estimate.dollars.low).toBeCloseTo(gpt.dollars!.low, 12);
    expect(estimate.dollars.high).toBeCloseTo(gpt.dollars!.high, 12);
  });

  it('uses the default max tokens when a request leaves it out', () => {
    expect(estimateCells([cell('sim:echo', 'x', {})], prices).outputTokens.max).toBe(4096);
  });

  it('rejects a negative expected output', () => {
    expect(() => estimateCells([], prices, { expectedOutputTokens: -1 })).toThrow(/expectedOutputTokens/);
  });

  it('an empty plan costs nothing', () => {
    expect(estimateCells([], prices)).toMatchObject({ cells: 0, inputTokens: 0, dollars: { low: 0, high: 0 } });
  });
});

describe('cloud provider prices', () => {
  it('prices Gemini API, Vertex and Bedrock models; Bedrock inference profiles bill as their base model', async () => {
    const { builtInPriceTable, costOf, findPrice } = await import('./prices.js');
    const table = builtInPriceTable();
    expect(findPrice('google:gemini-2.5-flash', table)?.output).toBe(2.5);
    expect(findPrice('vertex:gemini-2.5-pro', table)?.input).toBe(1.25);
    const base = findPrice('bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0', table);
    expect(base?.input).toBe(3);
    expect(findPrice('bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0', table)).toBe(base);
    expect(findPrice('bedrock:global.anthropic.claude-sonnet-4-5-20250929-v1:0', table)).toBe(base);
    expect(findPrice('bedrock:xx.anthropic.claude-sonnet-4-5-20250929-v1:0', table)).toBeUndefined();
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    expect(costOf('bedrock:eu.amazon.nova-lite-v1:0', usage, table)).toBeCloseTo(0.3, 10);
  });
});
