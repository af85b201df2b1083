import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { personaConfigSchema } from '../persona-drift/config.js';
import { loadConfigFile, parseOverride, schemaKeysAt } from './config-file.js';
import { ConfigError } from './errors.js';
import { thrownBy } from './testing/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-config-file-'));
function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}
const errorOf = (fn: () => unknown): ConfigError => thrownBy(fn, ConfigError);

const BASE = ['sessions: [a.jsonl]', 'targets: [sim:persona]', 'judges: [sim:judge]'];

describe('config errors', () => {
  it('an unknown key names its own line and the key probably meant', () => {
    const file = write('typo.yaml', [...BASE, 'analysis:', '  B: 300', '  strongThreshhold: 0.3'].join('\n'));
    const e = errorOf(() => loadConfigFile(file, personaConfigSchema));
    expect(e.line).toBe(6);
    expect(e.message).toMatch(/analysis\.strongThreshhold: unknown key "strongThreshhold" \(did you mean "strongThreshold"\?\)/);
    const top = write('top.yaml', [...BASE, 'sampels: 2'].join('\n'));
    const t = errorOf(() => loadConfigFile(top, personaConfigSchema));
    expect(t.line).toBe(4);
    expect(t.message).toMatch(/did you mean "samples"/);
  });

  it('a YAML syntax error names line and column', () => {
    const file = write('syntax.yaml', [...BASE, 'positions: [{ uniform: 3 }', 'samples: 2'].join('\n'));
    const e = errorOf(() => loadConfigFile(file, personaConfigSchema));
    expect(e.message).toMatch(/syntax\.yaml:\d+: YAML syntax \(column \d+\)/);
    expect(e.line).toBeGreaterThanOrEqual(4);
  });

  it('--set indexes into lists instead of turning them into mappings', () => {
    const file = write('lists.yaml', [...BASE, 'positions: [{ uniform: 12 }, { steps: [5] }]'].join('\n'));
    const { config } = loadConfigFile(file, personaConfigSchema, ['positions.0.uniform=3', 'targets.0=sim:other']);
    expect(config.positions).toEqual([{ uniform: 3 }, { steps: [5] }]);
    expect(config.targets).toEqual(['sim:other']);
  });

  it('--set reads a JSON scalar as that value, a flow list or mapping as YAML, anything else as text', () => {
    const value = (assignment: string) => parseOverride(assignment).value;
    expect(value('data.val=null')).toBeNull();
    expect(value('x=true')).toBe(true);
    expect(value('x=false')).toBe(false);
    expect(value('x=3')).toBe(3);
    expect(value('x=-1.5e2')).toBe(-150);
    expect(value('x="3"')).toBe('3');
    expect(value('x="null"')).toBe('null');
    expect(value('x=[filler, age]')).toEqual(['filler', 'age']);
    expect(value('x={ uniform: 3 }')).toEqual({ uniform: 3 });
    expect(value('x={"a": null}')).toEqual({ a: null });
    // Not JSON scalars: the text as written, not YAML's reading of it.
    for (const text of ['sim:judge', '~', 'Null', 'True', 'yes', '0x10', '.inf', '1_000', '01', '[unclosed', 'a=b', ''])
      expect(value(`x=${text}`), text).toBe(text);
    expect(parseOverride('data.val=null').path).toEqual(['data', 'val']);
  });

  it('finds the keys a schema accepts at a path', () => {
    expect(schemaKeysAt(personaConfigSchema, [])).toContain('targets');
    expect(schemaKeysAt(personaConfigSchema, ['analysis'])).toContain('strongThreshold');
    expect(schemaKeysAt(personaConfigSchema, ['gate'])).toContain('maxDrift');
    expect(schemaKeysAt(personaConfigSchema, ['targets'])).toEqual([]);
  });
});
