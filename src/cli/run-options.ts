import type { Command } from 'commander';
import { OVERRIDE_VALUE_RULE } from '../core/config-file.js';
import { type MeasurementRequest, parseDuration } from '../experiment/measurement.js';
import type { StageRuntime } from '../experiment/runtime.js';
import { PROVIDERS, type ProviderSpec } from '../models/providers.js';
import { BATCH_FLAG_HELP, materialsFlag, POLL_INTERVAL_HELP, positiveNumber, numberOption } from './options.js';

/**
 * The flags the audits' `run` and `report` commands share, each group added in
 * the order `--help` lists it. A command adds its own flags between the groups.
 */

export const SET_FLAG_HELP = `override any config key as key.path=value (${OVERRIDE_VALUE_RULE}); repeatable`;
export const REPORT_FILE_HELP = 'also write the Markdown report here when the run completes';
/** How a provider's reference is written after `name:` (from its registry entry, so a new provider is listed without editing help). */
function refForm(p: ProviderSpec): string {
  if (p.kind === 'sim') return '<profile>';
  if (p.kind === 'replay') return '<run.db>';
  if (p.kind === 'local') return '<gguf>';
  if (p.baseURLRequired || p.example.includes('@')) return '<model>@<baseURL>';
  return '<model>';
}

/** Comma-separated items wrapped to lines of at most `width` characters. */
function wrapList(items: readonly string[], width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    const next = line === '' ? item : `${line}, ${item}`;
    if (next.length > width && line !== '') {
      lines.push(`${line},`);
      line = item;
    } else line = next;
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

/**
 * The model reference forms, for `run` help texts, generated from the provider registry; the
 * simulated form comes last and each audit closes its parenthesis with its own simulated profiles.
 */
export function modelRefForms(): string {
  const forms = PROVIDERS.filter((p) => p.kind !== 'sim').map((p) => `${p.name}:${refForm(p)}`);
  return wrapList(['Model refs: ' + (forms[0] ?? ''), ...forms.slice(1), 'sim:<profile> (simulated, measures nothing'], 100);
}
export const MODEL_REF_FORMS = modelRefForms();
/** What Ctrl-C does to a run (`runAudit`'s signal handling). */
export const CTRL_C_HELP = 'Ctrl-C once: finish in-flight cells and stop (re-run the same command to resume). Twice: cancel them.';

/** `--concurrency`, `--max-cost`, `--batch` and `--poll-interval`: how fast and how far a run goes. */
export function addLimitFlags(command: Command, concurrency: (value: string) => number = positiveNumber('--concurrency')): Command {
  return command
    .option('--concurrency <n>', 'concurrent calls per provider', concurrency)
    .addOption(numberOption('--max-cost <usd>', 'stop before spending more than this', positiveNumber))
    .option('--batch', BATCH_FLAG_HELP)
    .option('--poll-interval <s>', POLL_INTERVAL_HELP, positiveNumber('--poll-interval'));
}

/** The stage runtime that `--concurrency`, `--max-cost`, `--prices`, `--batch` and `--poll-interval` ask for. */
export function runtimeOfFlags(flags: { concurrency?: number; maxCost?: number; prices?: string; batch?: boolean; pollInterval?: number }): StageRuntime {
  return {
    ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
    ...(flags.maxCost ? { maxCostUsd: flags.maxCost } : {}),
    ...(flags.prices ? { priceFile: flags.prices } : {}),
    ...(flags.batch ? { batch: true } : {}),
    ...(flags.pollInterval !== undefined ? { pollIntervalMs: flags.pollInterval * 1000 } : {}),
  };
}

/** `--fresh`, `--max-age` and `--tag`: a run as a measurement at a time (docs/over-time.md). */
export function addMeasurementFlags(command: Command): Command {
  return command
    .option('--fresh', 'measure again: a new run of the same design whose cells all call the endpoint anew (earlier runs are kept; config: fresh: true)')
    .option('--max-age <duration>', 'measure again when the latest measurement of this design is older than this (e.g. 7d, 12h); else resume it')
    .option('--tag <name>', 'name a new measurement (e.g. v2025-12), for `echolens compare --baseline <tag>`; with --max-age it applies when one is made');
}

/** The measurement request of a run command's `--fresh`, `--max-age` and `--tag`. */
export function measurementFlags(options: { fresh?: boolean; maxAge?: string; tag?: string }): MeasurementRequest {
  return {
    ...(options.fresh ? { fresh: true } : {}),
    ...(options.maxAge !== undefined ? { maxAgeMs: parseDuration(options.maxAge) } : {}),
    ...(options.tag !== undefined ? { tag: options.tag } : {}),
  };
}

/** `--prices`, `--materials` and `--procedure` of an audit that follows the authors' repository `repository`. */
export function addMaterialFlags(command: Command, repository: string): Command {
  return command
    .option('--prices <file>', 'prices overriding the built-in table (JSON or YAML)')
    .option('--materials <source>', `texts to send: echolens (default) or the path of a local clone of the authors\u2019 ${repository} repository`)
    .option('--procedure <name>', 'echolens (default) or reference: every procedural difference of the authors\u2019 code at once');
}

/** The config overrides `--materials` and `--procedure` stand for. */
export function materialOverrides(options: { materials?: string; procedure?: string }): string[] {
  return [
    ...(options.materials ? [`materials=${JSON.stringify(materialsFlag(options.materials))}`] : []),
    ...(options.procedure ? [`procedure=${JSON.stringify(options.procedure)}`] : []),
  ];
}
