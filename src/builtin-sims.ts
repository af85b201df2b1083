import { registerContinuationSimProfiles } from './continuation/sim.js';
import { registerMemorySimProfiles } from './memory-drift/sim.js';
import { registerSimProfile } from './models/sim-registry.js';
import './models/sim-echo.js';
import { registerPersonaSimProfiles } from './persona-drift/sim.js';

let registered = false;

/**
 * Registers every built-in SIMULATED model profile (`sim:echo`, `sim:persona`,
 * `sim:persona-null`, `sim:judge`, `sim:memory`, `sim:memory-null`,
 * `sim:labeler`, `sim:continuation`, `sim:continuation-null`). Simulations measure nothing; they exist for offline demos and tests.
 */
export function registerBuiltinSimProfiles(): void {
  if (registered) return;
  registered = true;
  registerPersonaSimProfiles(registerSimProfile);
  registerMemorySimProfiles();
  registerContinuationSimProfiles(registerSimProfile);
}
