import type { AnyAudit } from './experiment/audit.js';
import { registerAudit } from './experiment/registry.js';

/**
 * The built-in audit of one audit command group (`echolens persona …`), registered alone: its
 * commands read and write its own runs only, and loading the other audits' modules cost `persona
 * report` a tenth of a second of its start (issue #44). Commands that read every audit's runs
 * (report, gate, view, history, compare, …) register them all (audits.ts).
 */
const BUILTIN_AUDITS: Readonly<Record<string, () => Promise<AnyAudit>>> = {
  persona: async () => (await import('./persona-drift/audit.js')).personaAudit as unknown as AnyAudit,
  memory: async () => (await import('./memory-drift/audit.js')).memoryAudit as unknown as AnyAudit,
  continuation: async () => (await import('./continuation/audit.js')).continuationAudit as unknown as AnyAudit,
};

/** Registers the built-in audit whose command group `command` is; false when it names none. */
export async function registerBuiltinAuditOf(command: string): Promise<boolean> {
  const load = Object.hasOwn(BUILTIN_AUDITS, command) ? BUILTIN_AUDITS[command] : undefined;
  if (load === undefined) return false;
  registerAudit(await load());
  return true;
}
