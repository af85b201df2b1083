// Forked-session null calibration. A persona design whose sessions include forks (the same
// conversation under new ids) and no drift at all: before units were separated, a fork and its
// parent were two "independent" sessions answered by the same cached draws, and the drift test
// flagged drift far more often than α. After: forks are merged into their parent's unit and no
// request is drawn for two units, so the false-positive rate is nominal within Monte Carlo error.
//
// Two parts: (1) the real plan on real transcripts and their id-rewritten forks — how many cells
// two sessions shared before, and after; (2) the persona calibration's simulation of the same
// design shape (heterogeneous sessions, forks, positions), shared draws vs per-unit draws.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';
import { calibratePersona } from '../../src/persona-drift/calibrate.js';
import { BASE_DESIGN } from '../../src/persona-drift/calibrate-designs.js';
import { personaConfigSchema } from '../../src/persona-drift/config.js';
import { loadPersonaMaterials } from '../../src/persona-drift/materials.js';
import { planTargetCells } from '../../src/persona-drift/plan.js';
import { personaUnits, planPersona } from '../../src/persona-drift/run.js';
import { sessionPlanInput } from '../../src/persona-drift/sessions-input.js';
import { readSession } from '../../src/sessions/read.js';
import { CLAUDE_MAIN, CODEX_MAIN } from '../../src/sessions/testing/fixtures.js';
import { cellKey } from '../../src/store/keys.js';
import type { CellSpec } from '../../src/store/types.js';
import { FULL, SEED, seeded, size } from './size.js';

const ROOT = packageRoot();
const SOURCES = [
  join(ROOT, 'data', 'demo', 'claude-session.jsonl'),
  join(ROOT, 'data', 'demo', 'codex-session.jsonl'),
  CODEX_MAIN,
  CLAUDE_MAIN,
];

/** The same transcript under new ids: every UUID-shaped id replaced consistently (a fork whose ids were rewritten). */
function forkWithNewIds(file: string, dir: string, random: () => number): string {
  const fresh = new Map<string, string>();
  const hex = () => Math.floor(random() * 16).toString(16);
  const text = readFileSync(file, 'utf8').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (id) => {
    let next = fresh.get(id);
    if (next === undefined) {
      next = id.replace(/[0-9a-f]/gi, hex);
      fresh.set(id, next);
    }
    return next;
  });
  const out = join(dir, `fork-${basename(file)}`);
  writeFileSync(out, text);
  return out;
}

/** Cells whose request (key) is planned for more than one session label. */
function sharedBetweenSessions(specs: readonly CellSpec[], arm?: string): { shared: number; of: number } {
  const sessionsOf = new Map<string, Set<string>>();
  const mine = specs.filter((s) => arm === undefined || s.labels.arm === arm);
  for (const spec of mine) {
    const key = cellKey(spec);
    const set = sessionsOf.get(key) ?? new Set<string>();
    set.add(String(spec.labels.session));
    sessionsOf.set(key, set);
  }
  return { shared: mine.filter((s) => (sessionsOf.get(cellKey(s))?.size ?? 0) > 1).length, of: mine.length };
}

describe('forked-session null', () => {
  it('real transcripts and their forks: every filler cell was shared between sessions before; none is after, and each fork joins its parent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-forked-null-'));
    const random = seeded(SEED + 29);
    const files = [...SOURCES, ...SOURCES.map((f) => forkWithNewIds(f, dir, random))];
    const sessions = await Promise.all(files.map((f) => readSession(f)));
    const config = personaConfigSchema.parse({
      sessions: files,
      positions: [{ fraction: [0.3, 0.6, 0.9] }],
      arms: ['real', 'filler', 'scratch'],
      probes: { categories: ['coding_self'], paraphrases: 1 },
      samples: 1,
      targets: ['sim:persona'],
      judges: ['sim:judge'],
    });
    const materials = loadPersonaMaterials(config.materials);
    const before = planTargetCells(
      config,
      materials.stimuli,
      sessions.map((s, i) => sessionPlanInput(s, config, sessions, `S${i + 1}`)),
      { systemPrompts: materials.systemPrompts },
    );
    const fillerBefore = sharedBetweenSessions(before, 'filler');
    expect(fillerBefore.shared).toBe(fillerBefore.of);
    expect(sharedBetweenSessions(before).shared).toBe(before.length);

    const after = planPersona(config, sessions);
    const units = personaUnits(config, sessions);
    expect(units.units).toBe(SOURCES.length);
    expect(units.merged.map((f) => f.members)).toEqual(SOURCES.map((_, i) => [`S${i + 1}`, `S${i + 1 + SOURCES.length}`]));
    expect(sharedBetweenSessions(after).shared).toBe(0);
    // What remains shared is inside one unit (a fork's pre-fork cells are its parent's cells).
    expect(after.length).toBe(before.length);
    console.log(
      `forked null, real plan: ${fillerBefore.shared} of ${fillerBefore.of} filler cells (${sharedBetweenSessions(before).shared} of ${before.length} cells) shared between sessions before; 0 after (${units.units} units, ${units.saltedCells} cells drawn per unit)`,
    );
  });

  const replicates = size(80, 1000);
  it(`simulated null, ${replicates} replicates per design: shared draws inflate the FPR, per-unit draws keep it nominal`, () => {
    const heterogeneous = { betweenSession: 0.3, betweenPosition: 0.25, withinCell: 0.7 };
    const rows: string[] = [];
    const fpr = (sessions: number, forks: number, draws: 'shared' | 'per-unit') => {
      const result = calibratePersona(
        { ...BASE_DESIGN, sessions, forks, forkAt: 0.5, positionsPerSession: 8 },
        { replicates, worlds: ['null'], seed: SEED + sessions + forks, draws, variance: heterogeneous },
      );
      const headline = result.tests.find((t) => t.test.startsWith('drift target='));
      if (!headline?.fpr) throw new Error('no headline drift test');
      rows.push(`${sessions} sessions (${forks} forks), ${draws}: FPR ${headline.fpr.rate.toFixed(3)} ± ${headline.fpr.mcSE.toFixed(3)}, coverage ${headline.coverage?.rate.toFixed(3)}${headline.note ? ` (${headline.note})` : ''}`);
      return headline;
    };
    // The held-out shape: four sessions and a fork of each.
    const heldOutShared = fpr(8, 4, 'shared');
    const heldOutFixed = fpr(8, 4, 'per-unit');
    // Eight distinct conversations, four of them forked.
    const largerShared = fpr(12, 4, 'shared');
    const largerFixed = fpr(12, 4, 'per-unit');
    console.log(rows.join('\n'));
    const bound = (r: { rate: number; mcSE: number }) => 0.05 + 2.5 * Math.max(r.mcSE, Math.sqrt((0.05 * 0.95) / replicates));
    expect(heldOutShared.fpr!.rate).toBeGreaterThan(bound(heldOutShared.fpr!));
    expect(largerShared.fpr!.rate).toBeGreaterThan(largerFixed.fpr!.rate);
    expect(heldOutFixed.fpr!.rate).toBeLessThanOrEqual(bound(heldOutFixed.fpr!));
    expect(heldOutFixed.note).toMatch(/cannot reach p < 0.05/);
    expect(largerFixed.fpr!.rate).toBeLessThanOrEqual(bound(largerFixed.fpr!));
    expect(largerFixed.coverage!.rate).toBeGreaterThan(0.9);
  }, FULL ? 3_600_000 : 120_000);
});
