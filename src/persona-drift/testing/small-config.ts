import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../core/version.js';
import { type PersonaConfig, personaConfigSchema } from '../config.js';

/** The bundled demo session (a Claude Code transcript). */
export const DEMO_SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

/**
 * A small persona config for tests: the demo session at three positions, one probe category with
 * one paraphrase, two samples, simulated target and judge, 500 bootstrap draws; `partial` overrides keys.
 */
export function smallPersonaConfig(partial: Record<string, unknown> = {}): PersonaConfig {
  return personaConfigSchema.parse({
    sessions: [DEMO_SESSION],
    positions: [{ steps: [30, 50, 70] }],
    probes: { categories: ['coding_self'], paraphrases: 1 },
    samples: 2,
    targets: ['sim:persona'],
    judges: ['sim:judge'],
    analysis: { B: 500 },
    ...partial,
  });
}

/**
 * Writes to `file` a YAML persona config over the demo session at two positions whose target and
 * judge are openai-compatible models served at `baseURL` (a local fake server), and returns `file`.
 */
export function writeWirePersonaConfig(file: string, baseURL: string): string {
  writeFileSync(
    file,
    [
      `sessions: [${JSON.stringify(DEMO_SESSION)}]`,
      'positions: [{ steps: [40, 70] }]',
      `targets: ["openai-compatible:fake-target@${baseURL}"]`,
      `judges: ["openai-compatible:fake-judge@${baseURL}"]`,
      'analysis: { B: 300 }',
    ].join('\n'),
  );
  return file;
}
