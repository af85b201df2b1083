// Importing src/memory-drift/mitigation/ (DriftLens §5, App. I) registers its sim profiles;
// its tools are imported from their own modules.
import { registerMitigationSimProfiles } from './sims.js';

// The `sim:` adapter finds profiles by name; registering is cheap.
registerMitigationSimProfiles();
