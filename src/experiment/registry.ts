import { ConfigError, InvalidArgumentError } from '../core/errors.js';
import { checkGateKeys } from '../gate/config.js';
import type { AnyAudit, Audit } from './audit.js';

/**
 * The audits echolens knows. `src/audits.ts` registers the built-in ones; a
 * new audit is one folder plus one `registerAudit` line there. The report,
 * the viewer and the CLI loop over `listAudits()`.
 */

const audits = new Map<string, AnyAudit>();

export function registerAudit<C, I, K, R, X>(audit: Audit<C, I, K, R, X>): void {
  if (!/^[a-z][a-z0-9-]*$/u.test(audit.name))
    throw new InvalidArgumentError('audit.name', `must be lower-case letters, digits and dashes, got "${audit.name}"`);
  const existing = audits.get(audit.name);
  if (existing !== undefined && existing !== (audit as unknown as AnyAudit)) {
    throw new InvalidArgumentError('audit.name', `an audit named "${audit.name}" is already registered`);
  }
  // One gate section serves every audit, so a threshold key may have one owner only.
  if (audit.gate) {
    const others = [...audits.values()].flatMap((o) => (o.gate ? [{ name: o.name, thresholds: o.gate }] : []));
    checkGateKeys(audit.name, audit.gate, others);
  }
  audits.set(audit.name, audit as unknown as AnyAudit);
}

/** The audit of an experiment name, or undefined. */
export function findAudit(name: string): AnyAudit | undefined {
  return audits.get(name);
}

/** The audit of an experiment name; a ConfigError naming the known ones otherwise. */
export function getAudit(name: string): AnyAudit {
  const audit = audits.get(name);
  if (audit === undefined) {
    throw new ConfigError(`no audit named "${name}" (registered: ${[...audits.keys()].join(', ') || 'none'})`, { field: 'audit' });
  }
  return audit;
}

/** Every registered audit, in registration order. */
export function listAudits(): AnyAudit[] {
  return [...audits.values()];
}

/**
 * Every registered audit; an error when none is (shared code reads the registry, and only the
 * entry points fill it: the CLI, `import 'echolens'`, the demo, a test).
 */
export function registeredAudits(): AnyAudit[] {
  if (audits.size === 0) {
    throw new ConfigError('no audit is registered: call registerBuiltinAudits() (importing the echolens library does) or registerAudit(…) first', {
      field: 'audit',
    });
  }
  return listAudits();
}

/** Forgets an audit (tests that register their own). */
export function unregisterAudit(name: string): boolean {
  return audits.delete(name);
}
