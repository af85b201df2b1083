import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as echolens from './index.js';

describe('public API', () => {
  it("exports each audit's run, config loader, preflight and dry run, the gate and the demo", () => {
    for (const name of [
      'runPersona',
      'loadPersonaConfig',
      'personaConfigFromFlags',
      'preflightPersona',
      'dryRunPersona',
      'personaReport',
      'runMemory',
      'loadMemoryConfig',
      'preflightMemory',
      'dryRunMemory',
      'memoryReport',
      'preflightProblems',
      'PreflightError',
      'evaluateGate',
      'renderJUnit',
      'runDemo',
    ]) {
      expect(typeof (echolens as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('still exports every name it exported when the list was last written (a removal needs a deprecated alias)', () => {
    const recorded: string[] = JSON.parse(readFileSync(new URL('./__fixtures__/public-api-names.json', import.meta.url), 'utf8'));
    expect(recorded.length).toBeGreaterThan(600);
    const missing = recorded.filter((name) => !(name in echolens));
    expect(missing).toEqual([]);
  });
});
