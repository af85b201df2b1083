import { join } from 'node:path';
import { registerBuiltinAudits } from '../../src/audits.js';
import { registerBuiltinSimProfiles } from '../../src/builtin-sims.js';
import { packageRoot } from '../../src/core/version.js';
import { registerSimProfile } from '../../src/models/sim-registry.js';
import { personaConfigSchema } from '../../src/persona-drift/config.js';
import { runPersona } from '../../src/persona-drift/run.js';

export const DEMO_SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

/** Untrusted model output that would run code or fetch something if it were ever parsed as HTML or followed as a link. */
export const HOSTILE_TEXT = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(2)>',
  '<a href="javascript:alert(3)">click me</a>',
  '[link](javascript:alert(4))',
  'javascript:alert(5)',
  '<svg onload=alert(6)></svg>',
  '"><iframe src="javascript:alert(7)"></iframe>',
].join('\n');

let hostileRegistered = false;

export function registerTestSims(): void {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  if (hostileRegistered) return;
  hostileRegistered = true;
  registerSimProfile({ name: 'hostile', description: 'SIMULATION: answers every request with XSS payloads', answer: () => ({ text: HOSTILE_TEXT }) });
}

/** A small simulated persona run (planted drift, anchor and placebo arms, one stressor). */
export async function simPersonaRun(db: string, targets: string[] = ['sim:persona']): Promise<string> {
  registerTestSims();
  const config = personaConfigSchema.parse({
    sessions: [DEMO_SESSION],
    positions: [{ steps: [30, 50, 70] }],
    probes: { categories: ['coding_self'], paraphrases: 1 },
    mitigations: ['none', 'a-anchor', 'placebo_iso_recipe'],
    stressors: { ids: ['S2'], paraphrases: 2 },
    samples: 2,
    targets,
    judges: ['sim:judge'],
    analysis: { B: 400 },
  });
  const run = await runPersona(config, db, { progress: false, signal: new AbortController().signal });
  return run.runId;
}
