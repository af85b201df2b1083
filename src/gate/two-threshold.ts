import type { z } from 'zod';
import type { AuditGate } from '../experiment/audit.js';
import type { GateThresholds } from './config.js';
import type { GateCheck } from './types.js';

/** One threshold of a two-threshold gate: its key (which also names its flag and its words in the summary) and its help. */
interface ThresholdSpec<Key extends string> {
  key: Key;
  description: string;
}

/** `maxActionChange` → `max-action-change` (flag) or `max action change` (summary). */
const words = (key: string, separator: string) => key.replace(/[A-Z]/gu, (c) => `${separator}${c.toLowerCase()}`);

/** The resolved values of a two-threshold gate's keys (their meaning is documented on the audit's gate shape). */
export type TwoThresholds<Significant extends string, Limit extends string> = Record<Significant, boolean> & Record<Limit, number | null>;

/**
 * The gate every built-in audit has: a switch that fails a significant effect (on by default) and an
 * optional upper limit on its size (off by default). Only the checks differ between audits; the
 * defaults, flags (limit first, as `--help` lists them) and summary words are built here.
 */
export function twoThresholdGate<Report, Significant extends string, Limit extends string>(spec: {
  shape: z.ZodRawShape;
  significant: ThresholdSpec<Significant>;
  /** `argument` names the flag's value (`--max-drift <delta>`); `format` writes the limit in the summary. */
  limit: ThresholdSpec<Limit> & { argument: string; format?: (limit: number) => string };
  failsByDefault: string;
  check(report: Report, thresholds: TwoThresholds<Significant, Limit>, runId: string): GateCheck[];
}): AuditGate<Report> {
  const { significant, limit } = spec;
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
    check: (report, thresholds, runId) => spec.check(report, own(thresholds), runId),
  };
}
