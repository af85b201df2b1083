import { describe, expect, it } from 'vitest';
import { ZERO_USAGE } from '../models/types.js';
import { createProgressReporter, formatDuration, formatProgress } from './progress.js';
import type { ProgressSnapshot } from './runner.js';

const snap = (over: Partial<ProgressSnapshot> = {}): ProgressSnapshot => ({
  total: 200,
  finished: 50,
  cached: 10,
  done: 38,
  empty: 1,
  failed: 1,
  inFlight: 4,
  calls: 45,
  tokens: { ...ZERO_USAGE, inputTokens: 1_234_567, outputTokens: 12_345 },
  spendUsd: 0.1234,
  elapsedMs: 20_000,
  ...over,
});

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stream: { isTTY, columns: 200, write: (chunk: string) => void chunks.push(chunk) } };
}

describe('formatProgress', () => {
  it('shows cells, rate over called cells, ETA, tokens, spend, dropouts and failures', () => {
    expect(formatProgress(snap())).toBe(
      '50/200 cells (25.0%) · 10 cached · 20s elapsed · 2.00/s · ETA 1m 15s · tokens 1.2M in / 12k out · $0.1234 · 1 empty · 1 failed · 4 running',
    );
  });

  it('draws a bar, shows the spend against the budget, and shrinks to a narrow terminal keeping cells, ETA and spend', () => {
    const wide = formatProgress(snap(), { bar: true, budgetUsd: 5 });
    expect(wide).toContain('[###---------]');
    expect(wide).toContain('$0.1234 of $5');
    const narrow = formatProgress(snap(), { bar: true, budgetUsd: 5, width: 79 });
    expect(narrow.length).toBeLessThanOrEqual(79);
    expect(narrow).toContain('50/200 cells');
    expect(narrow).toContain('ETA 1m 15s');
    expect(narrow).toContain('$0.1234 of $5');
    expect(narrow).not.toContain('tokens');
    const tiny = formatProgress(snap(), { bar: true, budgetUsd: 5, width: 40 });
    // The full essentials (49 characters) do not fit 40: the compact form does.
    expect(tiny).toBe('50/200 ETA 1m 15s $0.1234 of $5');
  });

  it('has no ETA before anything was called and 0s at the end', () => {
    expect(formatProgress(snap({ done: 0, empty: 0, failed: 0, finished: 10, elapsedMs: 0 }))).toContain('ETA ?');
    expect(formatProgress(snap({ finished: 200, inFlight: 0 }))).toContain('ETA 0s');
    expect(formatDuration(3_725_000)).toBe('1h 02m');
  });
});

describe('createProgressReporter', () => {
  it('redraws one line on a terminal, throttled, and ends it on finish', () => {
    let t = 0;
    const { chunks, stream } = sink(true);
    const reporter = createProgressReporter({ stream, now: () => t, ttyIntervalMs: 100 });
    reporter.update(snap({ finished: 1 }));
    t = 50;
    reporter.update(snap({ finished: 2 }));
    t = 150;
    reporter.update(snap({ finished: 3 }));
    reporter.finish(snap({ finished: 200 }));
    expect(chunks).toHaveLength(4);
    expect(chunks.slice(0, 3).every((chunk) => chunk.startsWith('\r') && chunk.endsWith('\u001b[K'))).toBe(true);
    expect(chunks[1]).toContain('3/200');
    expect(chunks[2]).toContain('200/200');
    expect(chunks[3]).toBe('\n');
  });

  it('writes plain periodic lines when not a terminal', () => {
    let t = 0;
    const { chunks, stream } = sink(false);
    const reporter = createProgressReporter({ stream, now: () => t, logIntervalMs: 10_000, label: '[run-1]' });
    for (let i = 1; i <= 30; i += 1) {
      t = i * 1000;
      reporter.update(snap({ finished: i }));
    }
    reporter.finish();
    expect(chunks.every((chunk) => chunk.endsWith('\n') && !chunk.includes('\r'))).toBe(true);
    expect(chunks.map((chunk) => chunk.split(' ')[1])).toEqual(['1/200', '11/200', '21/200', '30/200']);
    expect(chunks[0]!.startsWith('[run-1] ')).toBe(true);
  });
});

describe('progress on an 80-column terminal, stage by stage', () => {
  const big = (over: Partial<ProgressSnapshot> = {}) =>
    snap({ total: 123_456, finished: 12_345, cached: 2_000, done: 10_000, spendUsd: 123.45, elapsedMs: 3_600_000, ...over });

  it('never cuts the spend: the label is shortened first, then the cell count is compacted', () => {
    const { chunks, stream } = sink(true);
    stream.columns = 80;
    const reporter = createProgressReporter({ stream, label: 'labeler check (attempt 2)', budgetUsd: 1000, now: () => 0 });
    reporter.update(big());
    const line = chunks[0]!.replace(/^\r/, '').replace('\u001b[K', '');
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line.endsWith('$123.45 of $1000')).toBe(true);
    expect(line).toContain('ETA ');
    expect(line).toContain('12345/123456');
    expect(line.startsWith('labeler')).toBe(true);
  });

  it('the cell count and ETA exclude cached cells from the rate', () => {
    // 10 000 cells called in an hour = 2.78/s; 111 111 left → ETA from called cells only.
    const line = formatProgress(big({ inFlight: 0, empty: 0, failed: 0 }));
    expect(line).toContain('2000 cached');
    expect(line).toContain('ETA 11h 06m');
  });

  it('shows the run total spend against the budget in later stages, and each stage keeps its own finished line', () => {
    const { chunks, stream } = sink(true);
    const targets = createProgressReporter({ stream, label: 'targets', budgetUsd: 5, now: () => 0 });
    targets.update(snap({ finished: 200, spendUsd: 1.5 }));
    targets.finish();
    const judges = createProgressReporter({ stream, label: 'judges (attempt 1)', budgetUsd: 5, spentBeforeUsd: 1.5, now: () => 0 });
    judges.update(snap({ finished: 20, spendUsd: 0.25 }));
    judges.finish();
    const text = chunks.join('');
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('targets 200/200 cells');
    expect(lines[0]).toContain('$1.5000 of $5');
    expect(lines[1]).toContain('judges (attempt 1) 20/200 cells');
    expect(lines[1]).toContain('$1.7500 of $5');
  });
});
