import type { z } from 'zod';
import type { AuditGate } from '../experiment/audit.js';
import type { GateThresholds } from './config.js';
import { limitCheck } from './format.js';
import type { GateCheck } from './types.js';

/** One threshold of a two-threshold gate: its key (which also names its flag, its checks and its words in the summary) and its help. */
interface ThresholdSpec<Key extends string> {
  key: Key;
  description: string;
}

/** `maxActionChange` → `max-action-change` (flag) or `max action change` (summary). */
const words = (key: string, separator: string) => key.replace(/[A-Z]/gu, (c) => `${separator}${c.toLowerCase()}`);

/** The resolved values of a two-threshold gate's keys (their meaning is documented on the audit's gate shape). */
type TwoThresholds<Significant extends string, Limit extends string> = Record<Significant, boolean> & Record<Limit, number | null>;

/**
 * One effect a gate checks (a target's, or a tier of a target's): why it could not be computed,
 * or its estimate as the messages state it.
 */
export type GatedEffect = {
  subject: string;
  /** Appended to the check names (`max-elevation:persona`) where one subject has several effects. */
  part?: string;
} & (
  | { notComputable: string }
  | {
      /** The estimate and its interval. */
      stated: string;
      /** Whether the significant check fails, and what its message says after `stated` (pass or fail). */
      significant: boolean;
      says: string;
      /** The size the limit bounds, how the limit check states it (default `stated`) and writes the limit. */
      size: number;
      sizeStated?: string;
      format(x: number): string;
    }
);

/**
 * The gate every built-in audit has: a switch that fails a significant effect (on by default) and an
 * optional upper limit on its size (off by default). Only the measured effects differ between audits;
 * the defaults, flags (limit first, as `--help` lists them), summary words and checks are built here.
 * A check is named by its key (`significant-drift`, `max-drift`); an effect that could not be computed
 * is one `skipped` check named by the effect (`drift`), made only when a threshold would have checked it.
 */
export function twoThresholdGate<Report, Significant extends `significant${string}`, Limit extends string>(spec: {
  audit: string;
  shape: z.ZodRawShape;
  significant: ThresholdSpec<Significant>;
  /** `argument` names the flag's value (`--max-drift <delta>`); `format` writes the limit in the summary. */
  limit: ThresholdSpec<Limit> & { argument: string; format?: (limit: number) => string };
  failsByDefault: string;
  effects(report: Report): GatedEffect[];
}): AuditGate<Report> & { checks(report: Report, thresholds: TwoThresholds<Significant, Limit>, runId: string): GateCheck[] } {
  const { significant, limit } = spec;
  // `significantActionChange` → `actionChange`: the effect both thresholds check.
  const effect = significant.key.charAt('significant'.length).toLowerCase() + significant.key.slice('significant'.length + 1);
  const checks = (report: Report, t: TwoThresholds<Significant, Limit>, runId: string) =>
    spec.effects(report).flatMap((e): GateCheck[] => {
      const base = { run: runId, audit: spec.audit, subject: e.subject };
      const name = (key: string) => words(key, '-') + (e.part === undefined ? '' : `:${e.part}`);
      const max = t[limit.key];
      if ('notComputable' in e) {
        return t[significant.key] || max !== null ? [{ ...base, name: name(effect), status: 'skipped', message: e.notComputable }] : [];
      }
      const made: GateCheck[] = [];
      if (t[significant.key]) made.push({ ...base, name: name(significant.key), status: e.significant ? 'fail' : 'pass', message: `${e.stated}: ${e.says}` });
      if (max !== null) made.push(limitCheck(base, name(limit.key), e.size, max, e.sizeStated ?? e.stated, e.format));
      return made;
    });
  // The resolved thresholds hold every audit's keys, each validated by its audit's shape; these are ours.
  const own = (t: GateThresholds) => t as unknown as TwoThresholds<Significant, Limit>;
  return {
    shape: spec.shape,
    defaults: { [significant.key]: true, [limit.key]: null },
    flags: [
      { key: limit.key, flags: `--${words(limit.key, '-')} <${limit.argument}>`, description: limit.description },
      { key: significant.key, flags: `--no-${words(significant.key, '-')}`, description: significant.description },
    ],
    failsByDefault: spec.failsByDefault,
    describe: (thresholds) => {
      const t = own(thresholds);
      const max = t[limit.key];
      return [
        `${words(significant.key, ' ')} ${t[significant.key] ? 'fails' : 'ignored'}`,
        `${words(limit.key, ' ')} ${max === null ? 'none' : (limit.format ?? String)(max)}`,
      ];
    },
    checks,
    check: (report, thresholds, runId) => checks(report, own(thresholds), runId),
  };
}
