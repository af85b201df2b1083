import { registerBuiltinAudits } from './audits.js';
import { registerBuiltinSimProfiles } from './builtin-sims.js';

/**
 * echolens — the library entry: the names a user imports (README "Library API").
 * This list is curated on purpose: each name here is a promise, so a helper used only inside
 * the CLI, the report or the viewer stays internal. src/public-api.test.ts checks it exactly.
 */

// Errors a caller catches (bad input, bad config, failed model call).
export { ConfigError, InputError } from './core/errors.js';
export { ModelCallError } from './models/errors.js';
export { packageVersion } from './core/version.js';

// Audits: run, report and calibrate entry points.
export {
  calibratePersona,
  dryRunPersona,
  loadPersonaConfig,
  personaConfigFromFlags,
  personaReport,
  preflightPersona,
  runPersona,
} from './persona-drift/index.js';
export type { PersonaCalibration, PersonaRunResult } from './persona-drift/index.js';
export type { PersonaConfig } from './persona-drift/config.js';
export type { PersonaReport } from './persona-drift/report-types.js';
export { renderPersonaMarkdown } from './persona-drift/document.js';
export {
  calibrateMemoryDesign,
  dryRunMemory,
  loadMemoryConfig,
  memoryReport,
  preflightMemory,
  renderMemoryMarkdown,
  resolveMemoryStimuli,
  runMemory,
} from './memory-drift/index.js';
export type { MemoryCalibration, MemoryConfig, MemoryReport } from './memory-drift/index.js';
export { calibrateContinuation } from './continuation/calibrate.js';
export type { ContinuationCalibration } from './continuation/calibrate.js';
export type { ContinuationConfig } from './continuation/config.js';
export { renderContinuationMarkdown } from './continuation/document.js';
export { continuationReport, loadContinuationConfig, runContinuation } from './continuation/run.js';
export type { ContinuationReport } from './continuation/run.js';

// The Audit protocol: how a new audit plugs in.
export type { Audit, AuditRunner } from './experiment/audit.js';
export { getAudit, listAudits, registerAudit } from './experiment/registry.js';
export { runAudit } from './experiment/run-audit.js';
export type { RunAuditOptions } from './experiment/run-audit.js';
export { registerBuiltinAudits } from './audits.js';
export { registerBuiltinSimProfiles } from './builtin-sims.js';

// The run store (SQLite file or PostgreSQL URL).
export { openStore, RunStore, SqliteRunStore } from './store/run-store.js';
export { PgRunStore } from './store/postgres/pg-store.js';
export type { OpenStoreOptions, RunInfo } from './store/index.js';

// Models.
export { createAdapter, formatModelRef, parseModelRef } from './models/index.js';
export type { ModelRef } from './models/index.js';
export type * from './models/types.js';

// Metrics and statistics: pure functions, whole modules.
export * from './metrics/index.js';
export * from './stats/index.js';

// Sessions: readers and redaction.
export { discoverSessions } from './sessions/discover.js';
export { readSession } from './sessions/read.js';
export type { ReadSessionOptions } from './sessions/read.js';
export { redactFile } from './sessions/redact/redact-file.js';
export type { RedactFileOptions } from './sessions/redact/redact-file.js';
export { Redactor, redactText } from './sessions/redact/redactor.js';
export type { RedactOptions } from './sessions/redact/redactor.js';
export { verifyFile } from './sessions/redact/verify/verify-file.js';
export type { Session } from './sessions/types.js';

// The library is an entry point (like the CLI): importing it registers the built-in audits,
// which the report, the gate, the viewer and compare read from the registry, and the built-in
// simulated models (`sim:persona`, `sim:judge`, …), so a library run works offline as the CLI's does.
registerBuiltinAudits();
registerBuiltinSimProfiles();
