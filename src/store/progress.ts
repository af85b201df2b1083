import type { ProgressSnapshot } from './runner.js';

export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressReporterOptions {
  /** Default process.stderr. */
  stream?: ProgressStream;
  /** Overrides the stream's own `isTTY`. */
  tty?: boolean;
  /** Minimum time between redraws on a terminal (default 100 ms). */
  ttyIntervalMs?: number;
  /** Time between log lines when not a terminal (default 10 s). */
  logIntervalMs?: number;
  now?: () => number;
  /** Prefix of every line, e.g. the run id. */
  label?: string;
  /** The --max-cost budget, shown next to the spend. */
  budgetUsd?: number;
  /** Spend of the run's earlier stages, added to the stage's own so the line shows the run's total. */
  spentBeforeUsd?: number;
}

export interface ProgressReporter {
  update(snapshot: ProgressSnapshot): void;
  /** Prints the final state (always) and ends the terminal line. */
  finish(snapshot?: ProgressSnapshot): void;
}

/**
 * A single updating line on a terminal; plain periodic log lines otherwise
 * (CI logs, files), so a long run's log stays readable.
 */
export function createProgressReporter(options: ProgressReporterOptions = {}): ProgressReporter {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const now = options.now ?? Date.now;
  const interval = tty ? (options.ttyIntervalMs ?? 100) : (options.logIntervalMs ?? 10_000);
  let lastPrinted = Number.NEGATIVE_INFINITY;
  let latest: ProgressSnapshot | undefined;
  let finished = false;

  const render = (stageSnapshot: ProgressSnapshot) => {
    const snapshot = options.spentBeforeUsd ? { ...stageSnapshot, spendUsd: stageSnapshot.spendUsd + options.spentBeforeUsd } : stageSnapshot;
    const prefix = options.label ? `${options.label} ` : '';
    const budget = options.budgetUsd === undefined ? {} : { budgetUsd: options.budgetUsd };
    if (tty) {
      const width = stream.columns && stream.columns > 20 ? stream.columns - 1 : undefined;
      // On a narrow terminal the least useful parts go first; cells, ETA and spend stay, and
      // when even they do not fit the label is shortened, never the spend at the end.
      const body = formatProgress(snapshot, { ...budget, bar: true, ...(width ? { width: width - Math.min(prefix.length, 12) } : {}) });
      const room = width === undefined ? prefix.length : Math.max(0, width - body.length);
      const label = prefix.length <= room ? prefix : room >= 4 ? `${prefix.slice(0, room - 2)}… ` : '';
      stream.write(`\r${label}${body}\u001b[K`);
    } else {
      stream.write(`${prefix}${formatProgress(snapshot, budget)}\n`);
    }
  };

  return {
    update(snapshot) {
      if (finished) return;
      latest = snapshot;
      const time = now();
      if (time - lastPrinted < interval) return;
      lastPrinted = time;
      render(snapshot);
    },
    finish(snapshot) {
      if (finished) return;
      finished = true;
      const last = snapshot ?? latest;
      if (last) render(last);
      if (tty && last) stream.write('\n');
    },
  };
}

export interface FormatProgressOptions {
  /** Draw a bar of the finished share (terminals). */
  bar?: boolean;
  /** The --max-cost budget, shown as `$spent of $budget`. */
  budgetUsd?: number;
  /** Fit this many characters by dropping the least useful parts (tokens, cached, running, rate, elapsed, bar). */
  width?: number;
}

/** One line: cells finished/total, bar, elapsed, rate, ETA, tokens, spend (of the budget), dropouts and failures. Pure. */
export function formatProgress(snapshot: ProgressSnapshot, options: FormatProgressOptions = {}): string {
  const { total, finished } = snapshot;
  const share = total === 0 ? 1 : finished / total;
  const called = snapshot.done + snapshot.empty + snapshot.failed;
  // Rate over cells called in this run: cached cells cost no time and would flatter the ETA.
  const seconds = snapshot.elapsedMs / 1000;
  const rate = seconds > 0 ? called / seconds : 0;
  const remaining = total - finished;
  const money = (x: number) => `$${x.toFixed(x < 10 ? 4 : 2)}`;
  // [text, priority]: the lowest priority is dropped first when the line must shrink; Infinity stays.
  const parts: Array<[string, number]> = [[`${finished}/${total} cells (${(100 * share).toFixed(1)}%)`, Number.POSITIVE_INFINITY]];
  if (options.bar) {
    const cells = 12;
    const full = Math.min(cells, Math.floor(share * cells));
    parts.push([`[${'#'.repeat(full)}${'-'.repeat(cells - full)}]`, 4]);
  }
  if (snapshot.cached > 0) parts.push([`${snapshot.cached} cached`, 1]);
  parts.push([`${formatDuration(snapshot.elapsedMs)} elapsed`, 5]);
  parts.push([`${formatRate(rate)}/s`, 3]);
  parts.push([`ETA ${remaining === 0 ? '0s' : rate > 0 ? formatDuration((remaining / rate) * 1000) : '?'}`, Number.POSITIVE_INFINITY]);
  parts.push([`tokens ${formatCount(snapshot.tokens.inputTokens)} in / ${formatCount(snapshot.tokens.outputTokens)} out`, 0]);
  // A model without a price costs "unknown", never $0.
  const unpriced = snapshot.unpricedCells ?? 0;
  const spent = unpriced === 0 ? money(snapshot.spendUsd) : snapshot.spendUsd > 0 ? `${money(snapshot.spendUsd)} + unknown` : 'cost unknown';
  // Before any call has answered, the spend is not known to be $0 (the model may have no price): shown only against a budget.
  if (called > 0 || options.budgetUsd !== undefined)
    parts.push([options.budgetUsd === undefined ? spent : `${spent} of $${options.budgetUsd}`, Number.POSITIVE_INFINITY]);
  if (snapshot.empty > 0) parts.push([`${snapshot.empty} empty`, 6]);
  if (snapshot.failed > 0) parts.push([`${snapshot.failed} failed`, 7]);
  if (snapshot.inFlight > 0) parts.push([`${snapshot.inFlight} running`, 2]);
  const join = (list: Array<[string, number]>) => list.map(([text]) => text).join(' · ');
  let kept = parts;
  if (options.width !== undefined) {
    const order = [...new Set(parts.map(([, p]) => p))].filter((p) => Number.isFinite(p)).sort((a, b) => a - b);
    for (const priority of order) {
      if (join(kept).length <= options.width) break;
      kept = kept.filter(([, p]) => p !== priority);
    }
    // Still too long: the compact cell count (no word, no percentage) and tighter separators.
    if (join(kept).length > options.width) {
      kept = kept.map(([text, p], i) => [i === 0 ? `${finished}/${total}` : text, p]);
      const compact = kept.map(([text]) => text).join(' ');
      if (compact.length < join(kept).length) return compact;
    }
  }
  return join(kept);
}

export function formatDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const secs = total % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (minutes > 0) return `${minutes}m ${String(secs).padStart(2, '0')}s`;
  return `${secs}s`;
}

function formatCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

function formatRate(rate: number): string {
  return rate >= 100 ? rate.toFixed(0) : rate >= 10 ? rate.toFixed(1) : rate.toFixed(2);
}
