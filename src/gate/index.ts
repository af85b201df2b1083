export { DEFAULT_GATE, gateConfigSchema, resolveGate } from './config.js';
export type { GateConfig, GateThresholds } from './config.js';
export { gatedRuns, gateInput } from './collect.js';
export { evaluateGate } from './evaluate.js';
export type { CheckStatus, GateCheck, GateResult, GateRunInput, Verdict as GateVerdict } from './evaluate.js';
export { renderGateMarkdown, renderGateText, renderJUnit } from './render.js';
export { gateOfRun, isSimulatedRun, modelsOfRun } from './run-info.js';
export { reportVerdict, verdictMarkdown } from './verdict.js';
export type { ReportVerdict } from './verdict.js';
