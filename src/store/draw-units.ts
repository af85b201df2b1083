import { getOrInsert } from '../core/get-or-insert.js';
import type { CellSpec } from './types.js';
import { requestKeys } from './request-hash.js';

/**
 * Units share no draws (docs/statistics.md, "Units share no draws"). A cell's key is the hash of
 * its request, so the same request planned for two units of inference — two sessions given the
 * same filler context, the empty scratch context, positions before a fork point — is one cell:
 * one model draw feeding both units. Their estimates are then correlated, and a test that treats
 * units as independent (a t interval or sign-flip test over sessions) is anti-conservative.
 *
 * `separateUnitDraws` gives each unit its own draw: every request that arises in more than one
 * unit gets `request.unit` set to its unit, which enters the key. Requests that arise in one unit
 * only keep their keys, so a run whose design had no collision resumes with the keys it has.
 * Pure: a copy of the plan (specs that change are copied; the others are the same objects).
 */

export interface DrawSeparation {
  specs: CellSpec[];
  /** Distinct requests that arose in more than one unit (each became one draw per unit). */
  sharedRequests: number;
  /** Cells given a unit salt. */
  saltedCells: number;
  /** Units involved in at least one shared request. */
  unitsInvolved: string[];
}

export function separateUnitDraws(specs: readonly CellSpec[], unitOf: (spec: CellSpec, index: number) => string): DrawSeparation {
  const units = specs.map((spec, index) => unitOf(spec, index));
  // A spec that already names its unit is salted by its planner; only unsalted ones can collide.
  const keys = specs.map((spec) => (spec.request.unit === undefined ? requestKeys(spec.request).key : null));
  const unitsByKey = new Map<string, Set<string>>();
  keys.forEach((key, index) => {
    if (key === null) return;
    const set = getOrInsert(unitsByKey, key, () => new Set<string>());
    set.add(units[index] as string);
  });
  const involved = new Set<string>();
  let sharedRequests = 0;
  for (const set of unitsByKey.values()) {
    if (set.size < 2) continue;
    sharedRequests += 1;
    for (const unit of set) involved.add(unit);
  }
  let saltedCells = 0;
  const out = specs.map((spec, index) => {
    const key = keys[index];
    if (key === null || key === undefined || (unitsByKey.get(key)?.size ?? 0) < 2) return spec;
    saltedCells += 1;
    return { request: { ...spec.request, unit: units[index] as string }, labels: spec.labels };
  });
  return { specs: out, sharedRequests, saltedCells, unitsInvolved: [...involved].sort() };
}

/** How many distinct requests arise in more than one unit (0 after `separateUnitDraws`). */
export function countSharedDraws(specs: readonly CellSpec[], unitOf: (spec: CellSpec, index: number) => string): number {
  const unitsByKey = new Map<string, Set<string>>();
  specs.forEach((spec, index) => {
    const key = requestKeys(spec.request).key;
    const set = getOrInsert(unitsByKey, key, () => new Set<string>());
    set.add(unitOf(spec, index));
  });
  let shared = 0;
  for (const set of unitsByKey.values()) if (set.size > 1) shared += 1;
  return shared;
}
