// Public API of src/continuation/ (tool-using continuation audit; re-exported from the package root).
export * from './analysis.js';
export * from './arms.js';
export * from './calibrate.js';
export * from './config.js';
export * from './cutpoints.js';
export * from './plan.js';
export * from './document.js';
export * from './run.js';
export * from './scoring.js';
export * from './sim.js';
export * from './tasks.js';
export * from './tools.js';
export * from './audit.js';
export * from './materials.js';
export * from './reference-analysis.js';
export * from './reference-fidelity.js';
