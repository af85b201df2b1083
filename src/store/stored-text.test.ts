import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cellKey } from './keys.js';
import { SqliteRunStore } from './run-store.js';
import { runCells } from './runner.js';
import { decodeStoredText, encodeStoredText } from './stored-text.js';
import { FakeModels, fakeResponse, makeSpecs, TEST_MANIFEST, usageFor } from './testing/fakes.js';
import { COST_PER_CALL, expectHostileRoundTrip, HOSTILE_TEXTS, runHostile } from './testing/hostile-text.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

const tmp = useTempDir('echolens-text-', 'test');

describe('stored text', () => {
  it('round-trips every string, and leaves storable strings as they are', () => {
    for (const text of HOSTILE_TEXTS) {
      const stored = encodeStoredText(text);
      expect(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(stored)).toBe(false);
      expect(decodeStoredText(stored)).toBe(text);
    }
    expect(encodeStoredText('plain answer with emoji 😀')).toBe('plain answer with emoji 😀');
    expect(encodeStoredText('a\u0000b')).toBe('\uFDD0"a\\u0000b"');
    expect(encodeStoredText('x\ud800')).toBe('\uFDD0"x\\ud800"');
    expect(encodeStoredText(null)).toBeNull();
    // A text an older store holds that begins with the marker but is no JSON literal reads as it is.
    expect(decodeStoredText('\uFDD0not json')).toBe('\uFDD0not json');
  });

  it('a SQLite run whose answers hold NUL and lone surrogates reads back exactly, one call per cell', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'hostile.db'));
    const { runId, result, calls, plan } = await runHostile(store, { cells: 18, id: 'hostile' });
    expect(result.status).toBe('done');
    expect(result.done).toBe(18);
    expect(calls).toBe(18);
    await expectHostileRoundTrip(store, runId, plan);
    // The bytes in the file hold no NUL (the same form PostgreSQL stores).
    const raw = store.db.prepare('SELECT text FROM cells').pluck().all() as string[];
    expect(raw.some((text) => text.startsWith('\uFDD0'))).toBe(true);
    expect(raw.every((text) => !text.includes('\u0000'))).toBe(true);
    await store.close();
  });

  it('an answer the store refuses fails its cell with a storage error once, its call paid and counted', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'refused.db'));
    store.db.exec(`CREATE TRIGGER refuse_poison BEFORE UPDATE OF text ON cells WHEN NEW.text LIKE '%POISON%'
                   BEGIN SELECT RAISE(ABORT, 'value refused by the test trigger'); END`);
    const poison = (index: number) => index % 3 === 1;
    const { runId, result, calls } = await runHostile(store, { cells: 12, id: 'refused', poison, concurrency: 1 });
    expect(calls).toBe(12); // no cell is called again
    expect(result.failed).toBe(4);
    expect(result.done).toBe(8);
    expect(result.spendUsd).toBeCloseTo(12 * COST_PER_CALL, 9);
    const cells = await store.cellResultsOfRun(runId);
    for (const cell of cells) {
      if (poison(cell.labels.index as number)) {
        expect(cell.result.status).toBe('failed');
        expect(cell.result.errorClass).toBe('storage');
        expect(cell.result.errorMessage).toMatch(/^storage: the answer of this call could not be stored \(.*refused by the test trigger/);
        expect(cell.result.text).toBeNull();
        expect(cell.result.attempts).toBe(1);
        expect(cell.result.costUsd).toBeCloseTo(COST_PER_CALL, 9);
      } else expect(cell.result.status).toBe('done');
    }
    await store.close();
  });

  it('counts an attempt before the call is sent (a killed run still shows it), once in all', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'attempts.db'));
    const plan = makeSpecs(5);
    const seen: Array<{ status: string | undefined; attempts: number | undefined }> = [];
    const models = new FakeModels({
      respond: async (request) => {
        const cell = await store.getCell(cellKey(request));
        seen.push({ status: cell?.status, attempts: cell?.attempts });
        return fakeResponse('ok', usageFor(request));
      },
    });
    const id = await store.createRun(TEST_MANIFEST, { id: 'attempts' });
    const result = await runCells(store, id, plan, { adapterFor: models.adapterFor, costOf: () => COST_PER_CALL });
    expect(seen).toEqual(plan.map(() => ({ status: 'pending', attempts: 1 })));
    expect(result.results.map((r) => r.attempts)).toEqual([1, 1, 1, 1, 1]);
    expect((await store.cellResultsOfRun(id)).map((c) => c.result.attempts)).toEqual([1, 1, 1, 1, 1]);
    await store.close();
  });
});
