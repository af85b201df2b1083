import { continuationAudit } from './continuation/audit.js';
import { registerAudit } from './experiment/registry.js';
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
  registerAudit(personaAudit);
  registerAudit(memoryAudit);
  registerAudit(continuationAudit);
}
