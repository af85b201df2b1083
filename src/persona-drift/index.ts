// Public API of src/persona-drift/ (ContextEcho), re-exported from the package root.
export * from './checkers.js';
export * from './contracts.js';
export * from './fingerprint.js';
export * from './interventions.js';
export * from './judge.js';
export { createJudgeSimProfile, createPersonaSimProfile, registerPersonaSimProfiles } from './sim.js';
export type { PersonaSimOptions } from './sim.js';
export { loadPersonaStimuli, probeText } from './stimuli.js';
export type { InterventionTexts, NegativeControlProbe, PersonaStimuli, Probe, ProbeCategory, ProbeSuite, Stressor } from './stimuli.js';
export { loadPersonaMaterials, type PersonaMaterials } from './materials.js';
export {
  collectPersonaObservations,
  dryRunPersona,
  loadPersonaConfig,
  PERSONA_EXPERIMENT,
  personaConfigFromFlags,
  personaReport,
  personaRunId,
  planPersona,
  preflightPersona,
  readConfigSessions,
  runPersona,
} from './run.js';
export type { PersonaDryRun, PersonaPreflight, PersonaRunResult } from './run.js';
export { calibratePersona, calibrationDesignFromConfig, DEFAULT_VARIANCE } from './calibrate.js';
export type { CalibrationDesign as PersonaCalibrationDesign, PersonaCalibration, TestOperatingCharacteristics, VarianceKnobs } from './calibrate.js';
