import { hashCanonical } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { RunHead, RunInfo } from '../store/run-store.js';
import type { CellSpec, RunManifest } from '../store/types.js';

/**
 * A measurement is a run with a time (docs/over-time.md). Runs of the same experiment and
 * config share a design id; the first measurement of a design has the design id as its run id
 * (so stores written before measurements existed keep resuming), every later one (`--fresh`,
 * `--max-age`) gets a run id of its own and a measurement salt that enters the key of every cell
 * it registers, so none of the earlier measurement's answers is reused. Pure apart from the clock
 * the caller passes.
 */

/** What the manifest records of a measurement (`manifest.measurement`). */
export interface MeasurementRecord {
  /** Shared by every run of the same experiment and config (the config's `fresh` key left out). */
  designId: string;
  /** When the measurement started (ISO 8601). */
  measuredAt: string;
  /** `--tag NAME` given to the run (e.g. a release name), null when none. */
  tag: string | null;
  /** Enters the key of every cell of a re-measurement (null for a design's first measurement). */
  salt: string | null;
}

/** What a run command asks for: measure again, or only when the latest measurement is older than `maxAgeMs`. */
export interface MeasurementRequest {
  fresh?: boolean;
  maxAgeMs?: number;
  tag?: string;
  /** The clock (tests); default now. */
  now?: Date;
}

/** Config keys that say how to measure, not what: left out of the design id. */
const NOT_DESIGN_KEYS = ['fresh'] as const;

function designConfig(config: unknown): unknown {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return config;
  const out: Record<string, unknown> = { ...(config as Record<string, unknown>) };
  for (const key of NOT_DESIGN_KEYS) delete out[key];
  return out;
}

/** The design id of an experiment's config: the run id every run had before measurements existed. */
export function designIdOf(experiment: string, config: unknown): string {
  return `${experiment}-${hashCanonical({ experiment, config: designConfig(config) }).slice(0, 12)}`;
}

/** The measurement a run records; a run written before measurements existed is its own design, measured when it started. */
export function measurementOf(run: Pick<RunInfo, 'id' | 'startedAt'> & { manifest: RunManifest }): MeasurementRecord {
  const recorded = run.manifest.measurement;
  if (recorded && typeof recorded.designId === 'string' && typeof recorded.measuredAt === 'string') {
    return { designId: recorded.designId, measuredAt: recorded.measuredAt, tag: recorded.tag ?? null, salt: recorded.salt ?? null };
  }
  return { designId: run.id, measuredAt: run.startedAt, tag: null, salt: null };
}

/** The runs of one design, oldest measurement first. */
export function runsOfDesign<R extends RunHead>(runs: readonly R[], designId: string): R[] {
  return runs
    .filter((r) => measurementOf(r).designId === designId)
    .sort((a, b) => measurementOf(a).measuredAt.localeCompare(measurementOf(b).measuredAt) || a.startedAt.localeCompare(b.startedAt));
}

/** Designs of a store with their runs, oldest measurement first, for one experiment or all. */
export function designsOf<R extends RunHead>(runs: readonly R[], experiment?: string): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const run of runs) {
    if (experiment !== undefined && run.experiment !== experiment) continue;
    const id = measurementOf(run).designId;
    if (!out.has(id)) out.set(id, runsOfDesign(runs, id));
  }
  return out;
}

export type MeasurementDecision =
  | { action: 'resume'; run: RunInfo; record: MeasurementRecord }
  | { action: 'create'; runId: string; record: MeasurementRecord };

/**
 * Which run a run command opens: the latest measurement of the design is resumed (a plain re-run
 * sends nothing for cells it has), unless the command asks for a fresh one, or the latest is older
 * than `maxAgeMs`; then a new run is created. The first measurement's run id is the design id.
 */
export function decideMeasurement(designId: string, runsOfThisDesign: readonly RunInfo[], request: MeasurementRequest = {}): MeasurementDecision {
  const now = request.now ?? new Date();
  const latest = runsOfThisDesign.at(-1);
  const tag = request.tag ?? null;
  if (tag !== null && !/^[A-Za-z0-9._-]{1,64}$/.test(tag)) {
    throw new InvalidArgumentError('--tag', `must be 1–64 letters, digits, ".", "_" or "-", got ${JSON.stringify(tag)}`);
  }
  if (latest !== undefined) {
    const record = measurementOf(latest);
    const age = now.getTime() - Date.parse(record.measuredAt);
    const stale = request.maxAgeMs !== undefined && age > request.maxAgeMs;
    if (!request.fresh && !stale) {
      // A tag names a new measurement; resuming one under another tag would silently drop it (with --max-age it applies when one is made).
      if (tag !== null && tag !== record.tag && request.maxAgeMs === undefined) {
        throw new InvalidArgumentError(
          '--tag',
          `names a new measurement, but this command resumes ${latest.id}${record.tag ? ` (tag ${record.tag})` : ''}: add --fresh to measure again`,
        );
      }
      return { action: 'resume', run: latest, record };
    }
  }
  const measuredAt = now.toISOString();
  if (latest === undefined) return { action: 'create', runId: designId, record: { designId, measuredAt, tag, salt: null } };
  const salt = hashCanonical({ designId, measuredAt, previous: runsOfThisDesign.map((r) => r.id) }).slice(0, 10);
  return { action: 'create', runId: `${designId}.${salt}`, record: { designId, measuredAt, tag, salt } };
}

/** A re-measurement's cells: the salt joins each request's draw unit, so every key is new (and a simulated model draws anew). */
export function saltSpecs(specs: readonly CellSpec[], salt: string | null | undefined): readonly CellSpec[] {
  if (!salt) return specs;
  return specs.map((spec) => ({
    request: { ...spec.request, unit: spec.request.unit === undefined ? `measurement:${salt}` : `${spec.request.unit}|measurement:${salt}` },
    labels: spec.labels,
  }));
}

/** `--max-age` values: a number and a unit (s, m, h, d, w), e.g. `7d`, `12h`. */
export function parseDuration(text: string, flag = '--max-age'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$/i.exec(text);
  if (!match) throw new InvalidArgumentError(flag, `must be a number and a unit (s, m, h, d or w), e.g. 7d or 12h; got ${JSON.stringify(text)}`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[(match[2] as string).toLowerCase() as 's'] as number;
  return Number(match[1]) * unit * 1000;
}
