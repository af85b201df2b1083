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
});
