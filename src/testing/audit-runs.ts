import { join } from 'node:path';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { continuationConfigSchema } from '../continuation/config.js';
import { runContinuation } from '../continuation/run.js';
import { packageRoot } from '../core/version.js';
import { memoryConfigSchema } from '../memory-drift/config.js';
import { runMemory } from '../memory-drift/run.js';
import { personaConfigSchema } from '../persona-drift/config.js';
import { runPersona } from '../persona-drift/run.js';

/**
 * Small simulated runs of every audit for the viewer and compare tests: one run per target
 * given, each in the store `db`. Planted profiles (`sim:persona`) against their nulls
 * (`sim:persona-null`) make B − A differences with a known sign.
 */

const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CROSS = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');
const quiet = () => ({ progress: false, signal: new AbortController().signal });

/** Registers the built-in sims and audits, then runs `runOne` for each target in turn; the run ids in target order. */
async function runPerTarget(targets: readonly string[], runOne: (target: string) => Promise<{ runId: string }>): Promise<string[]> {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  const ids: string[] = [];
  for (const target of targets) ids.push((await runOne(target)).runId);
  return ids;
}

export function personaRuns(db: string, targets: readonly string[], name?: string): Promise<string[]> {
  return runPerTarget(targets, (target) => {
    const config = personaConfigSchema.parse({
      ...(name ? { name } : {}),
      sessions: [SESSION],
      positions: [{ steps: [20, 35, 50, 65, 80, 95] }],
      probes: { categories: ['coding_self'], paraphrases: 1 },
      mitigations: ['none', 'a-anchor'],
      samples: 2,
      targets: [target],
      judges: ['sim:judge'],
      analysis: { B: 200 },
    });
    return runPersona(config, db, quiet());
  });
}

export function memoryRuns(db: string, targets: readonly string[]): Promise<string[]> {
  return runPerTarget(targets, (target) => {
    const config = memoryConfigSchema.parse({
      targets: [target],
      labeler: 'sim:labeler',
      questions: { limit: 15 },
      conditions: ['filler', 'age', 'bereavement'],
      k: 2,
      analysis: { B: 200 },
    });
    return runMemory(config, db, quiet());
  });
}

export function continuationRuns(db: string, targets: readonly string[]): Promise<string[]> {
  return runPerTarget(targets, (target) => {
    const config = continuationConfigSchema.parse({ session: SESSION, crossSession: CROSS, targets: [target], cutpoints: { count: 12 }, windowTokens: 1000 });
    return runContinuation(config, db, { progress: false });
  });
}
