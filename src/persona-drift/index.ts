// Public API of src/persona-drift/ (ContextEcho), re-exported from the package root.
export * from './checkers.js';
export * from './contracts.js';
export * from './fingerprint.js';
export * from './interventions.js';
export * from './judge.js';
export { dryRunPersona, loadPersonaConfig, personaConfigFromFlags, personaReport, preflightPersona, runPersona } from './run.js';
export type { PersonaRunResult } from './run.js';
export { calibratePersona } from './calibrate.js';
export type { PersonaCalibration } from './calibrate.js';
