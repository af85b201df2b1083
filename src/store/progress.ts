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

  const render = (snapshot: ProgressSnapshot) => {
    const line = (options.label ? `${options.label} ` : '') + formatProgress(snapshot);
    if (tty) {
      const width = stream.columns && stream.columns > 20 ? stream.columns - 1 : undefined;
      stream.write(`\r${width && line.length > width ? line.slice(0, width) : line}\u001b[K`);
    } else {
      stream.write(`${line}\n`);
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

/** One line: cells finished/total, rate, ETA, tokens, spend, dropouts and failures. Pure. */
export function formatProgress(snapshot: ProgressSnapshot): string {
  const { total, finished } = snapshot;
  const percent = total === 0 ? 100 : (100 * finished) / total;
  const called = snapshot.done + snapshot.empty + snapshot.failed;
  // Rate over cells called in this run: cached cells cost no time and would flatter the ETA.
  const seconds = snapshot.elapsedMs / 1000;
  const rate = seconds > 0 ? called / seconds : 0;
  const remaining = total - finished;
  const parts = [`${finished}/${total} cells (${percent.toFixed(1)}%)`];
  if (snapshot.cached > 0) parts.push(`${snapshot.cached} cached`);
  parts.push(`${formatRate(rate)}/s`);
  parts.push(`ETA ${remaining === 0 ? '0s' : rate > 0 ? formatDuration((remaining / rate) * 1000) : '?'}`);
  parts.push(`tokens ${formatCount(snapshot.tokens.inputTokens)} in / ${formatCount(snapshot.tokens.outputTokens)} out`);
  parts.push(`$${snapshot.spendUsd.toFixed(snapshot.spendUsd < 10 ? 4 : 2)}`);
  if (snapshot.empty > 0) parts.push(`${snapshot.empty} empty`);
  if (snapshot.failed > 0) parts.push(`${snapshot.failed} failed`);
  if (snapshot.inFlight > 0) parts.push(`${snapshot.inFlight} running`);
  return parts.join(' · ');
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
