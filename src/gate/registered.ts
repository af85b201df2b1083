import type { AuditGate } from '../experiment/audit.js';
import { listAudits } from '../experiment/registry.js';
import { type GateConfig, type GateThresholds, gateConfigSchema, resolveGate } from './config.js';

/** The gate over the registered audits: their threshold keys, defaults and flags. */

/** The gate members of the registered audits that have one, in registration order. */
export function registeredGates(): AuditGate<unknown>[] {
  return listAudits().flatMap((audit) => (audit.gate === undefined ? [] : [audit.gate]));
}

/** `resolveGate` over the registered audits' defaults. */
export function resolveRegisteredGate(...layers: ReadonlyArray<GateConfig | undefined>): GateThresholds {
  return resolveGate(registeredGates(), ...layers);
}

/** The schema of a `gate:` section holding any registered audit's keys. */
export function registeredGateSchema() {
  return gateConfigSchema(registeredGates());
}
