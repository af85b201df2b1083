import { z } from 'zod';

/**
 * Gate thresholds: when a run fails a CI gate. Settable as `gate:` in a
 * persona, memory or continuation config (recorded with the run), in a config file given to
 * `echolens gate --config`, or by flags; flags win, then the file, then the
 * run's own config, then these defaults.
 */
export const gateConfigSchema = z
  .object({
    /** Persona: fail when the drift gap Δ (filler − real) is significantly above 0 (its 95% CI excludes 0). */
    significantDrift: z.boolean().optional(),
    /** Persona: fail when the drift gap Δ is above this (the paper calls |Δ| ≥ 0.30 strong drift). */
    maxDrift: z.number().positive().optional(),
    /** Memory: fail when a persona or life-event tier's DTW elevation over the no-memory floor is significant (p < α, above 0). */
    significantElevation: z.boolean().optional(),
    /** Memory: fail when a persona or life-event tier's DTW elevation is above this fraction (0.25 = +25%). */
    maxElevation: z.number().positive().optional(),
    /** Continuation: fail when the primary contrast's (recent − cross) intention-to-treat fidelity difference is significant (p < α, either sign). */
    significantActionChange: z.boolean().optional(),
    /** Continuation: fail when that difference's absolute size is above this (fidelity is 0–1). */
    maxActionChange: z.number().positive().optional(),
    /** Every audit: fail when more than this fraction of a run's cells failed or stayed pending. */
    maxFailedCells: z.number().min(0).max(1).optional(),
  })
  .strict();

export type GateConfig = z.infer<typeof gateConfigSchema>;

export interface GateThresholds {
  significantDrift: boolean;
  maxDrift: number | null;
  significantElevation: boolean;
  maxElevation: number | null;
  significantActionChange: boolean;
  maxActionChange: number | null;
  maxFailedCells: number;
}

export const DEFAULT_GATE: GateThresholds = {
  significantDrift: true,
  maxDrift: null,
  significantElevation: true,
  maxElevation: null,
  significantActionChange: true,
  maxActionChange: null,
  maxFailedCells: 0.05,
};

/** Every threshold (a layer sets each with the value type its schema allows). */
const GATE_KEYS = Object.keys(DEFAULT_GATE) as Array<keyof GateThresholds>;

/** Later layers override earlier ones, key by key. */
export function resolveGate(...layers: ReadonlyArray<GateConfig | undefined>): GateThresholds {
  const out: GateThresholds = { ...DEFAULT_GATE };
  const settable: Record<keyof GateThresholds, unknown> = out;
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of GATE_KEYS) {
      const value = layer[key];
      if (value !== undefined) settable[key] = value;
    }
  }
  return out;
}
