import { registerBuiltinAudits } from './audits.js';

/**
 * echolens — the library entry. Everything public is exported from here:
 * `import { dtw, sriDrift, … } from 'echolens'`.
 * Each module owns its own index.ts; this file only re-exports them.
 */
export * from './core/errors.js';
export { canonicalJson, hashCanonical } from './core/canonical-json.js';
export { packageVersion } from './core/version.js';
export { hasValue, isPresent } from './core/maybe.js';
export type { Maybe } from './core/maybe.js';
export type * from './models/types.js';
export type * from './store/types.js';
export { ModelCallError, RETRYABLE_KINDS } from './models/errors.js';
export type { ModelErrorKind } from './models/errors.js';
export { registerSimProfile, getSimProfile, listSimProfiles } from './models/sim-registry.js';
export type { SimProfile, SimAnswer } from './models/sim-registry.js';
export * from './metrics/index.js';
export * from './stats/index.js';
export * from './models/index.js';
export * from './store/index.js';
export * from './sessions/index.js';
export * from './persona-drift/index.js';
export * from './memory-drift/index.js';
export * from './materials/index.js';
export * from './continuation/index.js';
export * from './report/index.js';
export * from './experiment/index.js';
export { registerBuiltinAudits } from './audits.js';

// The library is an entry point (like the CLI): importing it registers the built-in audits,
// which the report, the gate, the viewer and compare read from the registry.
registerBuiltinAudits();
export { registerBuiltinSimProfiles } from './builtin-sims.js';
export * from './gate/index.js';
export { assertPreflight, budgetProblems, PreflightError, preflightProblems, suggestedBudget } from './experiment/preflight.js';
export type { PreflightFile, PreflightInput, PreflightModel, PreflightProblem } from './experiment/preflight.js';
export { runDemo } from './demo/demo.js';
export type { DemoOptions, DemoResult } from './demo/demo.js';
export { closestNames, didYouMean } from './core/suggest.js';
