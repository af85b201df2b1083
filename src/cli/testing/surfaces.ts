import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { packageRoot } from '../../core/version.js';
import { runCliInProcess } from './run-cli.js';

/** `$0`, `$0.00`, `$0.0000` — a zero dollar amount, not `$0.0123`. */
export const ZERO_DOLLARS = /\$0(?:\.0*)?(?![\d.])/u;

/**
 * Every surface of a finished run in `db`, by name: report md/json/csv/html, gate text/md/json,
 * JUnit and step summary (files written in `dir`). Each report must exit 0.
 */
export async function reportAndGateSurfaces(db: string, dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const format of ['md', 'json', 'csv']) {
    const report = await runCliInProcess(['report', db, '--format', format]);
    expect(report.code, report.stderr).toBe(0);
    out[`report ${format}`] = report.stdout;
  }
  const html = join(dir, 'report.html');
  expect((await runCliInProcess(['report', db, '-o', html])).code).toBe(0);
  out['report html'] = readFileSync(html, 'utf8');
  const junit = join(dir, 'gate.xml');
  const summary = join(dir, 'summary.md');
  const gate = await runCliInProcess(['gate', db, '--junit', junit, '--summary', summary]);
  out['gate text'] = gate.stdout + gate.stderr;
  out['gate junit'] = readFileSync(junit, 'utf8');
  out['gate summary'] = readFileSync(summary, 'utf8');
  for (const format of ['md', 'json']) out[`gate ${format}`] = (await runCliInProcess(['gate', db, '--format', format])).stdout;
  return out;
}

/** `echolens memory run` of the simulated example, cut to 3 questions and 3 conditions, with these models. */
export function smallMemoryRunArgs(target: string, labeler: string, db: string): string[] {
  const example = join(packageRoot(), 'examples', 'memory-sim.yaml');
  const sets = ['questions.limit=3', 'conditions=["filler","age","job_loss"]', 'analysis.B=100'].flatMap((s) => ['--set', s]);
  return ['memory', 'run', example, '--target', target, '--labeler', labeler, ...sets, '--db', db];
}

/** The stdout of `echolens <args>`, which must exit with one of `okCodes`. */
export async function cliStdout(args: string[], okCodes: readonly number[] = [0]): Promise<string> {
  const run = await runCliInProcess(args);
  expect(okCodes, `${args.join(' ')}: ${run.stderr}`).toContain(run.code);
  return run.stdout;
}

/** The report of every run in `db` in each format (the HTML written in `dir`). */
export async function reportFormats(db: string, dir: string): Promise<{ md: string; json: string; csv: string; html: string }> {
  const [md, json, csv] = [
    await cliStdout(['report', db, '--format', 'md']),
    await cliStdout(['report', db, '--format', 'json']),
    await cliStdout(['report', db, '--format', 'csv']),
  ];
  await cliStdout(['report', db, '-o', join(dir, 'report.html')]);
  return { md, json, csv, html: readFileSync(join(dir, 'report.html'), 'utf8') };
}

/** The part of a Markdown report that belongs to one run (the report marks each run's start). */
export function markdownOfRun(md: string, runId: string): string {
  const start = md.indexOf(`<!-- run ${runId} `);
  const next = md.indexOf('<!-- run ', start + 1);
  return md.slice(start, next < 0 ? undefined : next);
}
