import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { readSession } from '../sessions/read.js';
import { CODEX_FORK, CODEX_MAIN } from '../sessions/testing/fixtures.js';
import type { Session } from '../sessions/types.js';
import { linkSessionFamilies } from '../sessions/units.js';
import { countSharedDraws } from '../store/draw-units.js';
import { cellKey } from '../store/keys.js';
import { personaConfigSchema } from './config.js';
import { loadPersonaMaterials } from './materials.js';
import { planTargetCells } from './plan.js';
import { planPersona, personaUnits } from './run.js';
import { sessionPlanInput } from './sessions-input.js';
import { checkUnitsResume, describePersonaUnits, type PersonaUnits } from './units.js';

const CLAUDE = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');

/** A copy of a Claude transcript with new session and message ids: the same text, as a fork whose ids were rewritten. */
function forkWithNewIds(file: string, dir: string): string {
  const text = readFileSync(file, 'utf8')
    .replaceAll('0b9a3c1e-5d2f-4e8a-9c71-3f2d6e8b1a40', '11111111-2222-4333-8444-555555555555')
    .replaceAll(/00000000-0000-4000-8000-0000000(\d{5})/g, 'aaaaaaaa-0000-4000-8000-0000000$1');
  const out = join(dir, 'fork.jsonl');
  writeFileSync(out, text);
  return out;
}

const config = (sessions: string[]) =>
  personaConfigSchema.parse({
    sessions,
    positions: [{ steps: [20, 40] }],
    arms: ['real', 'filler', 'scratch'],
    probes: { categories: ['coding_self'], paraphrases: 1 },
    samples: 2,
    targets: ['sim:persona'],
    judges: ['sim:judge'],
  });

/** The plan before units were assigned: what every earlier version ran. */
function rawPlan(cfg: ReturnType<typeof config>, sessions: readonly Session[]) {
  const materials = loadPersonaMaterials(cfg.materials);
  const inputs = sessions.map((s, i) => sessionPlanInput(s, cfg, sessions, `S${i + 1}`));
  return planTargetCells(cfg, materials.stimuli, inputs, { systemPrompts: materials.systemPrompts });
}

describe('persona units share no draws', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'echolens-units-'));
  });

  it('merges a fork with rewritten ids into its parent and draws shared filler/scratch requests per session', async () => {
    const files = [CLAUDE, CODEX, forkWithNewIds(CLAUDE, dir)];
    const sessions = await Promise.all(files.map((f) => readSession(f)));
    const cfg = config(files);
    const raw = rawPlan(cfg, sessions);
    // Before: the fork's every cell is its parent's cell, and scratch cells are shared by all sessions.
    expect(countSharedDraws(raw, (s) => String(s.labels.session))).toBeGreaterThan(0);
    const specs = planPersona(cfg, sessions);
    const units = personaUnits(cfg, sessions);
    expect(units.unitOfInference).toBe('session');
    expect(units.units).toBe(2);
    expect(units.merged).toHaveLength(1);
    expect(units.merged[0]!.unit).toBe('S1');
    expect(units.merged[0]!.members).toEqual(['S1', 'S3']);
    expect(units.merged[0]!.reasons.join(' ')).toMatch(/S3 same opening exchange as S1/);
    // The fork's cells are labelled with its unit and keep their file's label.
    const forkCells = specs.filter((s) => s.labels.sourceSession === 'S3');
    expect(forkCells.length).toBeGreaterThan(0);
    expect(new Set(forkCells.map((s) => s.labels.session))).toEqual(new Set(['S1']));
    // After: no request is drawn for two units.
    expect(countSharedDraws(specs, (s) => String(s.labels.session))).toBe(0);
    expect(units.sharedRequests).toBeGreaterThan(0);
    expect(specs.filter((s) => s.labels.arm === 'scratch').every((s) => s.request.unit === s.labels.session)).toBe(true);
    expect(describePersonaUnits(units).join('\n')).toMatch(/Sessions S1, S3 are one conversation/);
  });

  it('keeps every key of a design whose units share nothing (old runs resume without a call)', async () => {
    const files = [CLAUDE, CODEX];
    const sessions = await Promise.all(files.map((f) => readSession(f)));
    const cfg = personaConfigSchema.parse({ ...config(files), arms: ['real', 'filler'] });
    const raw = rawPlan(cfg, sessions);
    const specs = planPersona(cfg, sessions);
    const shared = countSharedDraws(raw, (s) => String(s.labels.session));
    const units = personaUnits(cfg, sessions);
    expect(units.merged).toEqual([]);
    // Only the requests that were shared change key; every other key is the old one.
    const changed = specs.filter((s, i) => cellKey(s) !== cellKey(raw[i]!));
    expect(changed.length).toBe(units.saltedCells);
    expect(units.sharedRequests).toBe(shared);
    expect(specs.filter((s) => s.labels.arm === 'real').every((s) => s.request.unit === undefined)).toBe(true);
  });

  it('with one session, positions are the units: the scratch context is drawn per position', async () => {
    const sessions = [await readSession(CLAUDE)];
    const cfg = config([CLAUDE]);
    const specs = planPersona(cfg, sessions);
    const units = personaUnits(cfg, sessions);
    expect(units.unitOfInference).toBe('position');
    expect(countSharedDraws(specs, (s) => String(s.labels.position))).toBe(0);
    expect(specs.find((s) => s.labels.arm === 'scratch')?.request.unit).toMatch(/^S1\/P?\d*/);
  });

  it('links a recorded Codex fork to its parent', async () => {
    const [main, fork] = await Promise.all([readSession(CODEX_MAIN), readSession(CODEX_FORK)]);
    expect(fork.forkedFrom).toBeDefined();
    const families = linkSessionFamilies([
      { label: 'S1', session: main },
      { label: 'S2', session: fork },
    ]).families();
    expect(families).toHaveLength(1);
    expect(families[0]!.reasons[0]).toMatch(/^S2 (fork of|same opening exchange as) S1$/);
  });
});

describe('resuming a run planned before units were separated', () => {
  const planned = (over: Partial<PersonaUnits>): PersonaUnits => ({
    unitOfInference: 'session',
    units: 2,
    merged: [],
    sharedRequests: 0,
    saltedCells: 0,
    ...over,
  });
  it('resumes when the design shares nothing, refuses when it did, and never checks runs that recorded their units', () => {
    expect(() => checkUnitsResume(undefined, planned({}), 'persona-1', 'runs.db')).not.toThrow();
    expect(() => checkUnitsResume(undefined, planned({ sharedRequests: 2, saltedCells: 8 }), 'persona-1', 'runs.db')).toThrow(
      /run persona-1 in runs\.db was planned before units were separated .*8 cells were shared between units.*another --db/,
    );
    const merged = planned({ merged: [{ unit: 'S1', members: ['S1', 'S3'], reasons: ['S3 fork of S1'] }] });
    expect(() => checkUnitsResume(undefined, merged, 'persona-1', 'runs.db')).toThrow(/S1\+S3 are one conversation/);
    expect(() => checkUnitsResume(merged, merged, 'persona-1', 'runs.db')).not.toThrow();
  });
});
