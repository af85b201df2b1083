import { ConfigError } from '../core/errors.js';
import { requestKeys } from '../store/request-hash.js';
import { separateUnitDraws } from '../store/draw-units.js';
import type { CellSpec } from '../store/types.js';
import { type LabelledSession, linkSessionFamilies, type SessionFamily } from '../sessions/units.js';

/**
 * The persona audit's units of inference (docs/statistics.md, "Units share no draws"). The
 * analysis treats sessions as independent units (positions, when there is one session). Two
 * rules make that true of the cells:
 *
 * 1. Sessions that are one conversation — forks, continuations, copies, or any two sessions
 *    whose real context at some probed position is the same request — are merged into one unit
 *    (the cells' `session` label becomes the unit; `sourceSession` keeps the file's label).
 * 2. A request that still arises in more than one unit (the same filler context, the empty
 *    scratch context) is drawn once per unit (`request.unit`), not shared through the cache.
 */

export interface PersonaUnits {
  /** What the analysis treats as independent. */
  unitOfInference: 'session' | 'position';
  units: number;
  /** Families of sessions merged into one unit, and why. */
  merged: SessionFamily[];
  /** Distinct requests that arose in more than one unit; each is now one draw per unit. */
  sharedRequests: number;
  /** Cells given a per-unit draw. */
  saltedCells: number;
}

export function assignPersonaUnits(specs: readonly CellSpec[], sessions: readonly LabelledSession[]): { specs: CellSpec[]; units: PersonaUnits } {
  const merger = linkSessionFamilies(sessions);
  // Rule 1, from the plan itself: a real context planned for two sessions is shared history.
  const realOwner = new Map<string, string>();
  for (const spec of specs) {
    if (spec.labels.arm !== 'real' || spec.labels.stage !== 'target') continue;
    const session = String(spec.labels.session);
    const key = requestKeys(spec.request).key;
    const owner = realOwner.get(key);
    if (owner === undefined) realOwner.set(key, session);
    else if (owner !== session) merger.join(session, owner, `${session} same probed context as ${owner} at ${String(spec.labels.position)}`);
  }
  const merged = merger.families();
  const relabelled =
    merged.length === 0
      ? [...specs]
      : specs.map((spec) => {
          const session = String(spec.labels.session);
          const unit = merger.find(session);
          return unit === session ? spec : { request: spec.request, labels: { ...spec.labels, session: unit, sourceSession: session } };
        });
  const unitNames = new Set(sessions.map((s) => merger.find(s.label)));
  const unitOfInference = unitNames.size > 1 ? 'session' : 'position';
  const separated = separateUnitDraws(relabelled, (spec) =>
    unitOfInference === 'session' ? String(spec.labels.session) : `${String(spec.labels.session)}/${String(spec.labels.position)}`,
  );
  return {
    specs: separated.specs,
    units: {
      unitOfInference,
      units: unitOfInference === 'session' ? unitNames.size : new Set(relabelled.map((s) => String(s.labels.position))).size,
      merged,
      sharedRequests: separated.sharedRequests,
      saltedCells: separated.saltedCells,
    },
  };
}

/**
 * The unit of a target cell's labels in a planned grid: its session, or its session and
 * position when the grid has one session (the rule `assignPersonaUnits` applied).
 */
export function personaUnitOf(targets: readonly CellSpec[]): (labels: CellSpec['labels']) => string {
  const sessions = new Set(targets.map((s) => String(s.labels.session)));
  return sessions.size > 1 ? (labels) => String(labels.session) : (labels) => `${String(labels.session)}/${String(labels.position)}`;
}

/**
 * A run planned before units were separated resumes only when its design had nothing to separate
 * (then every key and label is unchanged). Otherwise its cells were shared between units and
 * resuming would mix the old shared cells with the new per-unit ones in one run: refused.
 */
export function checkUnitsResume(recorded: PersonaUnits | undefined, planned: PersonaUnits, runId: string, db: string): void {
  if (recorded !== undefined || (planned.merged.length === 0 && planned.saltedCells === 0)) return;
  const what = [
    planned.merged.length > 0 ? `${planned.merged.map((f) => f.members.join('+')).join(', ')} are one conversation` : '',
    planned.saltedCells > 0 ? `${planned.saltedCells} cells were shared between units` : '',
  ].filter(Boolean);
  throw new ConfigError(
    `run ${runId} in ${db} was planned before units were separated and its design shares draws (${what.join('; ')}): its results are not valid as independent units. Start a new run with another --db (or delete this run) to re-plan it`,
    { field: 'sessions' },
  );
}

/** One line per fact a report should state about its units (empty when there is nothing to say). */
export function describePersonaUnits(units: PersonaUnits | undefined): string[] {
  if (units === undefined) return [];
  const lines: string[] = [];
  for (const family of units.merged) {
    lines.push(`Sessions ${family.members.join(', ')} are one conversation (${family.reasons.join('; ')}): analysed as one unit, ${family.unit}.`);
  }
  if (units.sharedRequests > 0) {
    lines.push(
      `${units.sharedRequests} request(s) arose in more than one ${units.unitOfInference} (identical filler or scratch contexts): each ${units.unitOfInference} got its own draw (${units.saltedCells} cells), so no two units share a cached answer.`,
    );
  }
  return lines;
}
