import { join } from 'node:path';
import { registerBuiltinAudits } from '../../audits.js';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { continuationConfigSchema } from '../../continuation/config.js';
import { runContinuation } from '../../continuation/run.js';
import { packageRoot } from '../../core/version.js';
import { memoryConfigSchema } from '../../memory-drift/config.js';
import { runMemory } from '../../memory-drift/run.js';
import { personaConfigSchema } from '../../persona-drift/config.js';
import { runPersona } from '../../persona-drift/run.js';

/**
 * Small simulated runs of every audit for the viewer and compare tests: one run per target
 * given, each in the store `db`. Planted profiles (`sim:persona`) against their nulls
 * (`sim:persona-null`) make B − A differences with a known sign.
 */

const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CROSS = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');
const quiet = () => ({ progress: false, signal: new AbortController().signal });

export async function personaRuns(db: string, targets: readonly string[], name?: string): Promise<string[]> {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  const ids: string[] = [];
  for (const target of targets) {
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
    ids.push((await runPersona(config, db, quiet())).runId);
  }
  return ids;
}

export async function memoryRuns(db: string, targets: readonly string[]): Promise<string[]> {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  const ids: string[] = [];
  for (const target of targets) {
    const config = memoryConfigSchema.parse({
      targets: [target],
      labeler: 'sim:labeler',
      questions: { limit: 15 },
      conditions: ['filler', 'age', 'bereavement'],
      k: 2,
      analysis: { B: 200 },
    });
    ids.push((await runMemory(config, db, quiet())).runId);
  }
  return ids;
}

export async function continuationRuns(db: string, targets: readonly string[]): Promise<string[]> {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  const ids: string[] = [];
  for (const target of targets) {
    const config = continuationConfigSchema.parse({ session: SESSION, crossSession: CROSS, targets: [target], cutpoints: { count: 12 }, windowTokens: 1000 });
    ids.push((await runContinuation(config, db, { progress: false })).runId);
  }
  return ids;
}
