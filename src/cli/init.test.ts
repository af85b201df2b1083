import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMemoryConfig } from '../memory-drift/run.js';
import { loadPersonaConfig } from '../persona-drift/run.js';
import { MEMORY_STARTER, PERSONA_STARTER } from './init-templates.js';

describe('echolens init starters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-init-'));
  it('the persona starter is a valid config with a gate section', () => {
    const file = join(dir, 'persona.yaml');
    writeFileSync(file, PERSONA_STARTER);
    const config = loadPersonaConfig(file);
    expect(config.targets).toEqual(['openai:gpt-4.1-mini']);
    expect(config.gate).toEqual({ significantDrift: true, maxDrift: 0.3, maxFailedCells: 0.05 });
    expect(config.limits.maxCostUsd).toBe(5);
  });
  it('the memory starter is a valid config with a gate section', () => {
    const file = join(dir, 'memory.yaml');
    writeFileSync(file, MEMORY_STARTER);
    const config = loadMemoryConfig(file);
    expect(config.labeler).toBe('anthropic:claude-sonnet-4-5');
    expect(config.gate?.maxElevation).toBe(0.5);
  });
});
