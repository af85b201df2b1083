import type { CalibrationDesign } from './calibrate.js';

/**
 * The five reference designs the persona calibration is validated on (tests and docs): one
 * session; three heterogeneous sessions; d0 + far; two system prompts; three mitigations with a
 * placebo. Ten coding-self probes, one paraphrase, one sample, twelve positions per session.
 */
const probes = Array.from({ length: 10 }, (_, i) => ({ item: `C${String(i + 1).padStart(2, '0')}`, category: 'coding_self' }));

export const BASE_DESIGN: CalibrationDesign = {
  targets: ['sim:target'],
  judges: ['sim:judge'],
  sessions: 1,
  positionsPerSession: 12,
  compactionsPerSession: 0,
  arms: ['real', 'filler'],
  mitigations: ['none'],
  distances: ['d0'],
  systemPrompts: ['probe-reference'],
  probes,
  paraphrases: 1,
  samples: 1,
  stressors: [],
  stressorParaphrases: 1,
  contracts: [],
  primaryCategory: 'coding_self',
};

export const REFERENCE_DESIGNS: Record<string, CalibrationDesign> = {
  'one session': BASE_DESIGN,
  'three sessions': { ...BASE_DESIGN, sessions: 3 },
  'd0 + far': { ...BASE_DESIGN, distances: ['d0', 'far'] },
  'two system prompts': { ...BASE_DESIGN, systemPrompts: ['probe-reference', 'format-strict'] },
  'three mitigations with placebo': { ...BASE_DESIGN, mitigations: ['none', 'a-anchor', 'v0', 'placebo_iso_recipe'] },
};
