import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { parseKeyTable } from './config-schema.js';

/** `echolens schema <audit>`: every key of every audit's config carries a description from the docs' key tables. */

/** A property's object forms: itself, its union members, its array items and their union members. */
function memberSchemas(child: Record<string, unknown>): Record<string, unknown>[] {
  const items = (child.items as Record<string, unknown>) ?? {};
  return [child, ...((child.anyOf as Record<string, unknown>[]) ?? []), items, ...((items.anyOf as Record<string, unknown>[]) ?? [])];
}

function undocumented(schema: Record<string, unknown>): string[] {
  const missing: string[] = [];
  const walk = (node: Record<string, unknown>, path: string) => {
    for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>)) {
      const full = path === '' ? key : `${path}.${key}`;
      if (typeof child.description !== 'string' || child.description.length < 10) missing.push(full);
      for (const c of memberSchemas(child)) if (c?.properties) walk(c, full);
    }
  };
  walk(schema, '');
  return missing;
}

describe('echolens schema <audit>', () => {
  for (const audit of ['persona', 'memory', 'continuation']) {
    it(`${audit}: a description on every key`, async () => {
      const run = await runCliInProcess(['schema', audit]);
      expect(run.code).toBe(0);
      const schema = JSON.parse(run.stdout) as Record<string, unknown>;
      const keys = Object.keys(schema.properties as object);
      expect(keys.length).toBeGreaterThan(10);
      expect(undocumented(schema)).toEqual([]);
      // The markdown form carries the documented default.
      const name = (schema.properties as Record<string, Record<string, unknown>>).name;
      expect(name?.markdownDescription).toMatch(/Default: `\w+-audit`/u);
    });
  }

  it('the check fails on a key without a description', () => {
    expect(undocumented({ properties: { a: { description: 'a documented key' }, b: { properties: { c: {} } } } })).toEqual(['b', 'b.c']);
  });

  it('reads multi-key rows: a key without a dot takes the first key’s parent', () => {
    const table = parseKeyTable('| key | default | meaning |\n|---|---|---|\n| `q.dataset`, `split` | — | with `source: hf` \\| rows |\n');
    expect([...table.keys()]).toEqual(['q.dataset', 'q.split']);
    expect(table.get('q.split')?.meaning).toBe('with `source: hf` \\| rows');
  });
});
