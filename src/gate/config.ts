import { z } from 'zod';
import { ConfigError } from '../core/errors.js';

/**
 * Gate thresholds: when a run fails a CI gate. Settable as `gate:` in an audit's config
 * (recorded with the run), in a config file given to `echolens gate --config`, or by flags;
 * flags win, then the file, then the run's own config, then the defaults.
 *
 * The gate knows one threshold of its own (`maxFailedCells`, every run); every other key
 * belongs to an audit, which declares it in its `gate` member (`AuditGateThresholds`): the
 * schema of its keys, their defaults and the `echolens gate` flags that set them. The keys of
 * all audits share one flat namespace (a `gate:` section reads `maxDrift: 0.3`), so no two
 * audits may declare the same key.
 */

/** The run-level threshold every audit shares. */
export const runGateShape = {
  /** Every audit: fail when more than this fraction of a run's cells failed or stayed pending. */
  maxFailedCells: z.number().min(0).max(1).optional(),
  /**
   * `echolens gate --baseline`: fail when the change of a headline statistic from the baseline run is
   * significant and larger than this in absolute value (default 0: any significant change).
   */
  maxChange: z.number().min(0).optional(),
};

export const DEFAULT_MAX_FAILED_CELLS = 0.05;

/** A `gate:` section as read: each key optional. */
export type GateConfig = Readonly<Record<string, unknown>>;

/** Resolved thresholds: every key of every audit set, plus the run-level one. */
export type GateThresholds = { readonly maxFailedCells: number } & Readonly<Record<string, unknown>>;

/** An `echolens gate` flag that sets one threshold. */
export interface GateFlag {
  /** The threshold key it sets. */
  key: string;
  /** commander flags, e.g. `--max-drift <delta>` or `--no-significant-drift` (sets the key to false). */
  flags: string;
  description: string;
}

/** What an audit declares about its thresholds. */
export interface AuditGateThresholds {
  /** Its keys of a `gate:` section (each optional), e.g. `{ maxDrift: z.number().positive().optional() }`. */
  readonly shape: z.ZodRawShape;
  /** The value of each of its keys when no layer sets it (null = off). */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** The flags of `echolens gate` that set its keys, in the order `--help` lists them. */
  readonly flags: readonly GateFlag[];
  /** What fails by default, for `echolens gate --help`, e.g. "significant drift". */
  readonly failsByDefault?: string;
  /** Its thresholds in words for the gate's summary, e.g. ["significant drift fails", "max drift none"]. */
  describe(thresholds: GateThresholds): string[];
}

/** The schema of an audit config's `gate:` section: the audit's own keys and the run-level one. */
export function auditGateSectionSchema<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object({ ...shape, ...runGateShape }).strict();
}

/** The schema of a `gate:` section read across audits (`echolens gate --config`, a run's recorded config). */
export function gateConfigSchema(audits: readonly AuditGateThresholds[]) {
  return auditGateSectionSchema(Object.assign({}, ...audits.map((audit) => audit.shape)) as z.ZodRawShape);
}

/** Every audit's defaults (in registration order), then the run-level one. */
export function defaultGate(audits: readonly AuditGateThresholds[]): GateThresholds {
  const out: Record<string, unknown> = {};
  for (const audit of audits) Object.assign(out, audit.defaults);
  return { ...out, maxFailedCells: DEFAULT_MAX_FAILED_CELLS };
}

/** Refuses an audit whose threshold keys another audit (or the gate) already declares. */
export function checkGateKeys(name: string, audit: AuditGateThresholds, others: ReadonlyArray<{ name: string; thresholds: AuditGateThresholds }>): void {
  for (const key of Object.keys(audit.shape)) {
    if (key in runGateShape) throw new ConfigError(`audit "${name}" declares the gate threshold "${key}", which the gate itself owns`, { field: 'gate' });
    const owner = others.find((o) => o.name !== name && key in o.thresholds.shape);
    if (owner) throw new ConfigError(`audit "${name}" declares the gate threshold "${key}", which audit "${owner.name}" already declares`, { field: 'gate' });
  }
}

/** Later layers override earlier ones, key by key, over the defaults of `audits`. */
export function resolveGate(audits: readonly AuditGateThresholds[], ...layers: ReadonlyArray<GateConfig | undefined>): GateThresholds {
  const out: Record<string, unknown> = { ...defaultGate(audits) };
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of Object.keys(out)) {
      const value = layer[key];
      if (value !== undefined) out[key] = value;
    }
  }
  return out as GateThresholds;
}
