import { registerSimProfile } from '../../models/sim-registry.js';
import { registerMemorySimProfiles } from '../sim.js';
import { createDpoJudgeSimProfile } from './dpo-judge.js';
import { createRewriterSimProfile } from './rewrite.js';

/**
 * Registers `sim:dpo-judge` and `sim:dpo-rewriter`, plus the memory sims they work with
 * (`sim:memory` as generator, `sim:labeler`). SIMULATIONS; idempotent.
 */
export function registerMitigationSimProfiles(): void {
  registerMemorySimProfiles();
  registerSimProfile(createDpoJudgeSimProfile());
  registerSimProfile(createRewriterSimProfile());
}

// Importing src/memory-drift/mitigation/ (DriftLens §5, App. I) registers its sim profiles (the
// `sim:` adapter finds profiles by name; registering is cheap); its tools are imported from their own modules.
registerMitigationSimProfiles();
