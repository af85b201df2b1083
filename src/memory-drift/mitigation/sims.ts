import { registerSimProfile } from '../../models/sim-registry.js';
import { createDpoJudgeSimProfile } from './dpo-judge.js';
import { createRewriterSimProfile } from './rewrite.js';

/** Registers `sim:dpo-judge` and `sim:dpo-rewriter` (SIMULATIONS; idempotent). */
export function registerMitigationSimProfiles(): void {
  registerSimProfile(createDpoJudgeSimProfile());
  registerSimProfile(createRewriterSimProfile());
}
