import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfigFile } from './config-file.js';
import { ConfigError } from './errors.js';
import { thrownBy } from './testing/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-config-typo-'));
const schema = z.strictObject({
  name: z.string().default('x'),
  targets: z.array(z.string()),
  judges: z.array(z.string()),
  nested: z.strictObject({ seed: z.number() }).optional(),
});

function load(text: string): ConfigError {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  return thrownBy(() => loadConfigFile(file, schema), ConfigError);
}

describe('a misspelt key', () => {
  it('a misspelt required key: did-you-mean first, then the key it leaves missing, on the typo line', () => {
    const error = load('judges: [a]\ntargest: [b]\n');
    expect(error.message).toMatch(/unknown key "targest" \(did you mean "targets"\?\)/);
    expect(error.message).toMatch(/missing required key: targets$/);
    expect(error.message).not.toMatch(/expected array, received undefined/);
    expect(error.field).toBe('targest');
    expect(error.line).toBe(2);
  });

  it('two required keys missing, one of them misspelt: both named', () => {
    const error = load('targest: [b]\n');
    expect(error.message).toMatch(/did you mean "targets"/);
    expect(error.message).toMatch(/missing required keys: targets, judges$/);
  });

  it('in a nested mapping too: the path of the typo and the key it leaves missing', () => {
    const error = load('targets: [a]\njudges: [b]\nnested:\n  sede: 1\n');
    expect(error.message).toMatch(/unknown key "sede" \(did you mean "seed"\?\)/);
    expect(error.message).toMatch(/missing required key: seed$/);
    expect(error.field).toBe('nested.sede');
  });

  it('a missing key with no typo keeps the plain message', () => {
    const error = load('targets: [a]\n');
    expect(error.field).toBe('judges');
    expect(error.message).toMatch(/expected array/);
  });
});

describe('an unknown key that misses nothing', () => {
  it('names no missing key', () => {
    const error = load('targets: [a]\njudges: [b]\nnmae: x\n');
    expect(error.message).toMatch(/unknown key "nmae" \(did you mean "name"\?\)/);
    expect(error.message).not.toMatch(/missing/);
  });
});
