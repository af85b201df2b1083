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
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../../src/builtin-sims.js';
import { registerSimProfile } from '../../src/models/sim-registry.js';
import { createPersonaSimProfile } from '../../src/persona-drift/sim.js';
import { personaReport, personaRunner, runPersona } from '../../src/persona-drift/run.js';
import { runAudit } from '../../src/experiment/run-audit.js';
import { openStore } from '../../src/store/run-store.js';
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
const SOURCES = [join(ROOT, 'data', 'demo', 'claude-session.jsonl'), join(ROOT, 'data', 'demo', 'codex-session.jsonl'), CODEX_MAIN, CLAUDE_MAIN];

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
  it(
    `simulated null, ${replicates} replicates per design: shared draws inflate the FPR, per-unit draws keep it nominal`,
    () => {
      const heterogeneous = { betweenSession: 0.3, betweenPosition: 0.25, withinCell: 0.7 };
      const rows: string[] = [];
      const fpr = (sessions: number, forks: number, draws: 'shared' | 'per-unit') => {
        const result = calibratePersona(
          { ...BASE_DESIGN, sessions, forks, forkAt: 0.5, positionsPerSession: 8 },
          { replicates, worlds: ['null'], seed: SEED + sessions + forks, draws, variance: heterogeneous },
        );
        const headline = result.tests.find((t) => t.test.startsWith('drift target='));
        if (!headline?.fpr) throw new Error('no headline drift test');
        rows.push(
          `${sessions} sessions (${forks} forks), ${draws}: FPR ${headline.fpr.rate.toFixed(3)} ± ${headline.fpr.mcSE.toFixed(3)}, coverage ${headline.coverage?.rate.toFixed(3)}${headline.note ? ` (${headline.note})` : ''}`,
        );
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
    },
    FULL ? 3_600_000 : 120_000,
  );
});

/**
 * A synthetic Claude Code coding session, heterogeneous by seed: its task, length and commands
 * vary. `forkOf` copies the first `forkAt` steps of another session's records under new ids and
 * continues differently (a fork whose ids were rewritten).
 */
interface SyntheticSession {
  file: string;
  steps: Array<{ say: string; command: string; output: string }>;
  task: string;
}
const TASKS = [
  'Fix the failing parser tests in src/parse.ts and keep the change minimal.',
  'Add a --since flag to the CLI that filters rows by date, with tests.',
  'The build breaks on Node 20: find out why and fix it.',
  'Refactor the report module so that each format lives in its own file.',
  'Investigate the flaky integration test in test/api.test.ts.',
  'Add input validation to the config loader and report the failing field.',
  'Speed up the CSV import: it takes 40 seconds on the sample file.',
  'Write a migration that renames the column user_name to username.',
];
const COMMANDS = [
  'npm test',
  'git status',
  'npx tsc --noEmit',
  'ls src',
  'git diff',
  'npm run build',
  'cat package.json',
  'npx vitest run test/api.test.ts',
  'grep -rn TODO src',
  'node scripts/bench.js',
];
function syntheticSteps(random: () => number, count: number): SyntheticSession['steps'] {
  return Array.from({ length: count }, (_, i) => {
    const command = COMMANDS[Math.floor(random() * COMMANDS.length)] as string;
    const failing = Math.floor(random() * 5);
    return {
      say: `Step ${i + 1}: I'll run \`${command}\` to check the current state${failing > 2 ? ' and look at the failures' : ''}.`,
      command,
      output:
        failing > 0
          ? `FAIL src/module${failing}.test.ts > case ${i}\n  expected ${failing} to be ${failing + 1}\nTests ${failing} failed | ${20 + i} passed`
          : `ok (${20 + i} passed)`,
    };
  });
}
function writeSession(dir: string, name: string, task: string, steps: SyntheticSession['steps'], random: () => number): SyntheticSession {
  const lines: string[] = [];
  const id = `${name}-${Array.from({ length: 12 }, () => Math.floor(random() * 16).toString(16)).join('')}`;
  let parent: string | null = null;
  let n = 0;
  const push = (type: 'user' | 'assistant', message: unknown) => {
    n += 1;
    const uuid = `${id.slice(0, 8)}-0000-4000-8000-${String(n).padStart(12, '0')}`;
    lines.push(JSON.stringify({ sessionId: id, type, uuid, parentUuid: parent, timestamp: new Date(Date.UTC(2026, 5, 1, 9, 0, n)).toISOString(), message }));
    parent = uuid;
  };
  push('user', { role: 'user', content: task });
  steps.forEach((step, i) => {
    push('assistant', { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: step.say }] });
    push('assistant', {
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: `toolu_${name}_${i}`, name: 'Bash', input: { command: step.command } }],
    });
    push('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${name}_${i}`, content: step.output }] });
  });
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, steps, task };
}

describe('forked-session null, end to end (SIMULATED null targets through the store)', () => {
  beforeAll(() => registerBuiltinSimProfiles());
  const targets = size(3, 48);
  it(
    `${targets} null targets on 8 heterogeneous sessions and 4 forks: no cell is shared between units, the drift test flags at most its nominal rate`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'echolens-forked-e2e-'));
      const random = seeded(SEED + 290);
      const originals = TASKS.map((task, i) => writeSession(dir, `s${i + 1}`, task, syntheticSteps(random, 14 + Math.floor(random() * 30)), random));
      // Forks of the first four: the first half of the parent's steps, then a different continuation.
      const forks = originals.slice(0, 4).map((parent, i) => {
        const keep = Math.floor(parent.steps.length / 2);
        return writeSession(dir, `fork${i + 1}`, parent.task, [...parent.steps.slice(0, keep), ...syntheticSteps(random, parent.steps.length - keep)], random);
      });
      // Each null target is one replicate: drift is equally likely with real context, filler or none,
      // and each target draws with its own seed (the profile alone is a function of the request).
      const nullProfile = createPersonaSimProfile({ name: 'forked-null', drift: 0.3, baselineDrift: 0.3 });
      const names = Array.from({ length: targets }, (_, i) => {
        const name = `forked-null-${i}`;
        registerSimProfile({
          name,
          description: 'SIMULATION: null target (drift equally likely in every arm), its own seed',
          answer: (request, seed) => nullProfile.answer(request, (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0),
        });
        return `sim:${name}`;
      });
      const config = personaConfigSchema.parse({
        sessions: [...originals, ...forks].map((s) => s.file),
        positions: [{ fraction: [0.3, 0.6, 0.9] }],
        probes: { categories: ['coding_self'], paraphrases: 1 },
        samples: 1,
        targets: names,
        judges: ['sim:judge'],
        analysis: { B: 2000 },
        seed: SEED,
      });
      const sessions = await Promise.all(config.sessions.map((f) => readSession(f)));
      // Before: the plan every earlier version ran (forks as sessions, identical requests one cell).
      const materials = loadPersonaMaterials(config.materials);
      const oldPlan = planTargetCells(
        config,
        materials.stimuli,
        sessions.map((x, i) => sessionPlanInput(x, config, sessions, `S${i + 1}`)),
        {
          systemPrompts: materials.systemPrompts,
        },
      );
      const before = await runAudit(personaRunner, config, join(dir, 'before.db'), {
        runtime: { progress: false, signal: new AbortController().signal },
        input: sessions,
        specs: oldPlan,
      });
      const beforeStore = openStore(join(dir, 'before.db'), { readonly: true });
      const beforeReport = await personaReport(beforeStore, before.runId);
      await beforeStore.close();
      const flaggedBefore = beforeReport.drift.filter((d) => !('error' in d.signFlip) && d.signFlip.p < 0.05).length;

      const db = join(dir, 'runs.db');
      const run = await runPersona(config, db, { progress: false, signal: new AbortController().signal }, sessions);
      const store = openStore(db, { readonly: true });
      const report = await personaReport(store, run.runId);
      const cells = (await store.cellsOfRun(run.runId)).filter((c) => c.labels.stage === 'target');
      await store.close();
      // Each fork joined its parent; 8 units remain.
      expect(report.units?.units).toBe(8);
      expect(report.units?.merged.map((f) => f.members)).toEqual([1, 2, 3, 4].map((i) => [`S${i}`, `S${i + 8}`]));
      // No stored cell answers two units.
      const unitsOfKey = new Map<string, Set<string>>();
      for (const c of cells) unitsOfKey.set(c.key, (unitsOfKey.get(c.key) ?? new Set()).add(String(c.labels.session)));
      expect([...unitsOfKey.values()].filter((u) => u.size > 1)).toHaveLength(0);
      const tests = report.drift.filter((d) => !('error' in d.signFlip));
      expect(tests).toHaveLength(targets);
      const flagged = tests.filter((d) => !('error' in d.signFlip) && d.signFlip.p < 0.05).length;
      const rate = flagged / targets;
      const mcSE = Math.sqrt((0.05 * 0.95) / targets);
      console.log(
        `forked null end to end: drift flagged (raw sign-flip p < 0.05) for ${flaggedBefore} of ${targets} null targets with shared draws (12 sessions) and ${flagged} of ${targets} per unit (8 units); nominal 0.05 ± ${mcSE.toFixed(3)}`,
      );
      expect(rate).toBeLessThanOrEqual(0.05 + 2.5 * mcSE);
      // The old plan really shared: the forks' early cells were their parents' cells.
      expect(oldPlan.filter((c) => c.labels.session === 'S9').some((c) => oldPlan.some((o) => o.labels.session === 'S1' && cellKey(o) === cellKey(c)))).toBe(
        true,
      );
      if (FULL) expect(flaggedBefore).toBeGreaterThan(flagged);
    },
    FULL ? 3_600_000 : 180_000,
  );
});
