import type { AnyAudit } from './experiment/audit.js';
import { continuationAudit } from './continuation/audit.js';
import { findAudit, registerAudit, unregisterAudit } from './experiment/registry.js';
import { memoryAudit } from './memory-drift/audit.js';
import { personaAudit } from './persona-drift/audit.js';

let registered = false;

/**
 * Registers the built-in audits. Adding an audit: write its folder with an
 * `audit.ts` exporting an `Audit` (see experiment/audit.ts and DEVELOPING.md),
 * then add one `registerAudit` line here. The report, the viewer and the CLI
 * pick it up from the registry.
 */
export function registerBuiltinAudits(): void {
  if (registered) return;
  registered = true;
  // One of them may already be registered alone (an audit's own command group, builtin-audit.ts,
  // run earlier in the same process): registered again in this order, the registry lists them as always.
  for (const audit of [personaAudit, memoryAudit, continuationAudit] as unknown as AnyAudit[]) {
    if (findAudit(audit.name) === audit) unregisterAudit(audit.name);
    registerAudit(audit);
  }
}
