// Public API of src/experiment/: the Audit protocol, its registry and the shared run lifecycle.
export { AUDIT_CSV_COLUMNS } from './audit.js';
export type {
  AnalyzedRun,
  AnalyzeOptions,
  AnyAudit,
  Audit,
  AuditCalibration,
  AuditCalibrationOptions,
  AuditCsvRow,
  AuditDryRun,
  AuditHeadlineNumber,
  AuditHeadlineTarget,
  AuditLimits,
  AuditRenderers,
  AuditRunContext,
  AuditRunner,
  AuditRunResult,
  AuditSummaryLine,
} from './audit.js';
export { labelDecoder } from './labels.js';
export type { LabelDecoder } from './labels.js';
export { askUntilParsed, groupReaskChains, resolveReaskChain } from './reask.js';
export type { ChainReader, ChainResolution, ParseResult } from './reask.js';
export { findAudit, getAudit, listAudits, registerAudit, unregisterAudit } from './registry.js';
export { AUDIT_EXIT, analyzeAuditRun, auditExitCode, auditRunId, latestRun, runAudit } from './run-audit.js';
export type { RunAuditOptions } from './run-audit.js';
export { decideMeasurement, designIdOf, measurementOf, parseDuration, runsOfDesign } from './measurement.js';
export type { MeasurementRecord, MeasurementRequest } from './measurement.js';
export { installStopSignals, openExperimentRun, runParsedStage, runStage } from './runtime.js';
export type { ExperimentRun, ParsedItem, ParsedOutcome, StageRuntime } from './runtime.js';
