import type { z } from 'zod';
import type { AuditGate } from '../experiment/audit.js';
import type { GateThresholds } from './config.js';
import type { GateCheck } from './types.js';

/** One threshold key of a two-threshold gate: its key, `echolens gate` flag, help and its name in the summary. */
interface ThresholdSpec<Key extends string> {
  key: Key;
  flags: string;
  description: string;
  /** e.g. "significant drift" → "significant drift fails" / "significant drift ignored". */
  label: string;
}

/**
 * The gate every built-in audit has: a switch that fails a significant effect (on by default) and an
 * optional upper limit on its size (off by default). Only the checks differ between audits; the
 * defaults, flags (limit first, as `--help` lists them) and summary words are built here.
 */
export function twoThresholdGate<Report, Significant extends string, Limit extends string>(spec: {
  shape: z.ZodRawShape;
  significant: ThresholdSpec<Significant>;
  limit: ThresholdSpec<Limit> & { format?: (limit: number) => string };
  failsByDefault: string;
  check(report: Report, thresholds: Record<Significant, boolean> & Record<Limit, number | null>, runId: string): GateCheck[];
}): AuditGate<Report> {
  const { significant, limit } = spec;
  // The resolved thresholds hold every audit's keys, each validated by its audit's shape; these are ours.
  const own = (t: GateThresholds) => t as unknown as Record<Significant, boolean> & Record<Limit, number | null>;
  return {
    shape: spec.shape,
    defaults: { [significant.key]: true, [limit.key]: null },
    flags: [
      { key: limit.key, flags: limit.flags, description: limit.description },
      { key: significant.key, flags: significant.flags, description: significant.description },
    ],
    failsByDefault: spec.failsByDefault,
    describe: (thresholds) => {
      const t = own(thresholds);
      const max = t[limit.key];
      return [`${significant.label} ${t[significant.key] ? 'fails' : 'ignored'}`, `${limit.label} ${max === null ? 'none' : (limit.format ?? String)(max)}`];
    },
    check: (report, thresholds, runId) => spec.check(report, own(thresholds), runId),
  };
}
