/** Perturbation categories as DriftLens names them (§2.2), in the paper's order; for tests. */

/** The three pragmatic-noise categories. */
export const PAPER_NOISE_CATEGORIES = ['filler', 'whitespace', 'punctuation'];

/** The ten persona categories. */
export const PAPER_PERSONA_CATEGORIES = [
  'gender',
  'trans_status',
  'sexual_orientation',
  'age',
  'occupation',
  'appearance',
  'disability',
  'education',
  'physical_traits',
  'socioeconomic_status',
];
