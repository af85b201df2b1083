// The names of src/memory-drift/ that the package root re-exports; everything else is
// imported from its own module. Importing this file registers the audit's sim profiles.
export type { MemoryReport } from './analysis.js';
export { renderMemoryMarkdown } from './document.js';
export { calibrateMemoryDesign } from './calibrate.js';
export type { MemoryCalibration } from './calibrate.js';
export type { MemoryConfig } from './config.js';
export { dryRunMemory, loadMemoryConfig, preflightMemory, resolveMemoryStimuli, runMemory } from './run.js';
export { memoryReport } from './observations.js';

// Registers the mitigation sim profiles (DPO judge, rewriter) too.
import './mitigation/index.js';

import { registerMemorySimProfiles } from './sim.js';

// The `sim:` adapter finds profiles by name; registering is cheap (data files load on first use).
registerMemorySimProfiles();
