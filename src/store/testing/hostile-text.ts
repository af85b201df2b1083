import { expect } from 'vitest';
import { cellKey } from '../keys.js';
import type { RunStore } from '../run-store.js';
import { runCells } from '../runner.js';
import type { RunCellsResult } from '../runner-types.js';
import { FakeModels, makeSpecs, TEST_MANIFEST, usageFor } from './fakes.js';

/**
 * Model output that a text column does not hold as it is (stored-text.ts), and a run
 * whose answers are made of it, for the tests of both backends.
 */
export const HOSTILE_TEXTS: readonly string[] = [
  'before\u0000after',
  '\u0000',
  'lone high \ud800 surrogate',
  'lone low \udc00 surrogate',
  '\udc00\ud800 reversed pair',
  '\uFDD0"looks encoded"',
  '\uFDD0not a JSON literal',
  'plain answer with emoji 😀 and 中文',
  '',
];

export const COST_PER_CALL = 0.002;

/** The answer, reasoning and reported model of the plan's cell `index`: hostile text in turn, plus the index (so every cell differs). */
export function hostileAnswer(index: number): { text: string; reasoning: string; responseModel: string } {
  const hostile = HOSTILE_TEXTS[index % HOSTILE_TEXTS.length]!;
  return { text: `${hostile}|${index}`, reasoning: `think\u0000${hostile}`, responseModel: `model\u0000${index}` };
}

/**
 * Runs `cells` cells whose answers are hostile text (and, for `poison(index)`, contain the
 * word POISON, which a test makes the store refuse). Returns the run and the calls made.
 */
export async function runHostile(
  store: RunStore,
  options: { cells: number; id: string; poison?: (index: number) => boolean; concurrency?: number; fatalBurst?: number },
): Promise<{ runId: string; result: RunCellsResult; calls: number; plan: ReturnType<typeof makeSpecs> }> {
  const plan = makeSpecs(options.cells);
  const indexOf = new Map(plan.map((spec, index) => [cellKey(spec.request), index]));
  const models = new FakeModels({
    respond: (request) => {
      const index = indexOf.get(cellKey(request))!;
      const answer = hostileAnswer(index);
      return {
        text: options.poison?.(index) === true ? `POISON ${answer.text}` : answer.text,
        reasoning: answer.reasoning,
        responseModel: answer.responseModel,
        finishReason: 'stop',
        usage: usageFor(request),
        latencyMs: 1,
      };
    },
  });
  const runId = await store.createRun(TEST_MANIFEST, { id: options.id });
  const result = await runCells(store, runId, plan, {
    adapterFor: models.adapterFor,
    costOf: () => COST_PER_CALL,
    concurrency: options.concurrency ?? 4,
    ...(options.fatalBurst === undefined ? {} : { fatalBurst: options.fatalBurst }),
  });
  return { runId, result, calls: models.totalCalls, plan };
}

/** Every read path of the store gives back the exact strings the model returned. */
export async function expectHostileRoundTrip(store: RunStore, runId: string, plan: ReturnType<typeof makeSpecs>): Promise<void> {
  const expected = new Map(plan.map((spec, index) => [cellKey(spec.request), hostileAnswer(index)]));
  const cells = await store.cellsOfRun(runId);
  expect(cells.length).toBe(plan.length);
  for (const cell of cells) {
    const want = expected.get(cell.key)!;
    expect(cell.result.status).toBe('done');
    expect(cell.result.text).toBe(want.text);
    expect(cell.result.reasoning).toBe(want.reasoning);
    expect((await store.getCell(cell.key))?.text).toBe(want.text);
  }
  for (const [key, result] of await store.resultsOfRun(runId)) expect(result.text).toBe(expected.get(key)!.text);
  for (const row of await store.cellIndexOfRun(runId)) expect(row.text).toBe(expected.get(row.key)!.text);
  let jsonl = '';
  const { Writable } = await import('node:stream');
  await store.exportJsonl(
    runId,
    new Writable({
      write(chunk, _encoding, done) {
        jsonl += chunk.toString();
        done();
      },
    }),
  );
  const lines = jsonl
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { key: string; text: string; reasoning: string; responseModel: string });
  expect(lines.length).toBe(plan.length);
  for (const line of lines) {
    const want = expected.get(line.key)!;
    expect(line.text).toBe(want.text);
    expect(line.reasoning).toBe(want.reasoning);
    expect(line.responseModel).toBe(want.responseModel);
  }
}
