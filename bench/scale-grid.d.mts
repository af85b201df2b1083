import type { PersonaConfig } from '../src/persona-drift/config.js';
import type { CellSpec } from '../src/store/types.js';

export declare const SIZE: { targets: number; positions: number; categories: string[]; samples: number; chars: number; B: number };
export declare function syntheticText(seed: number, chars: number): string;
export declare function planGrid(
  modules: Record<string, unknown>,
  targets: string[],
  judge: string,
): { config: PersonaConfig; specs: CellSpec[]; planStart: number; planMs: number; uniquePrefixes: number };
