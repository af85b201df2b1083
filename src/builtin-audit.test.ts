import { describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from './audits.js';
import { registerBuiltinAuditOf } from './builtin-audit.js';
import { listAudits, unregisterAudit } from './experiment/registry.js';

describe('registerBuiltinAuditOf: an audit command group registers its own audit only', () => {
  it('registers the named audit alone, nothing for other commands, and the full registration keeps its order', async () => {
    for (const name of ['persona', 'memory', 'continuation']) unregisterAudit(name);
    expect(await registerBuiltinAuditOf('report')).toBe(false);
    expect(await registerBuiltinAuditOf('toString')).toBe(false);
    expect(listAudits()).toHaveLength(0);
    expect(await registerBuiltinAuditOf('memory')).toBe(true);
    expect(listAudits().map((a) => a.name)).toEqual(['memory']);
    registerBuiltinAudits();
    expect(listAudits().map((a) => a.name)).toEqual(['persona', 'memory', 'continuation']);
  });
});
