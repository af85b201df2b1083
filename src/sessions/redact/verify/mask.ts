import { createHmac, randomBytes } from 'node:crypto';

/** Public prefixes that may be shown (at most 3 characters of them). */
const SHOWABLE_PREFIXES = [
  'sk-',
  'AIza',
  'hf_',
  'gsk_',
  'xai-',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'glpat-',
  'xox',
  'AKIA',
  'ASIA',
  'eyJ',
  'npm_',
  'r8_',
  'pplx-',
  'sk_live_',
  'rk_live_',
  'sk_test_',
  'whsec_',
  'ya29.',
  'pypi-',
  'SG.',
];

/**
 * A preview that never shows the value: at most the first 3 characters of a public
 * prefix, then the length. `sk-…(51 chars)`.
 */
export function maskedPreview(kind: string, value: string): string {
  const length = `(${value.length} chars)`;
  if (kind.startsWith('identity:') || kind === 'email' || kind === 'home_path' || kind === 'host') return `…${length}`;
  const prefix = SHOWABLE_PREFIXES.find((p) => value.startsWith(p));
  return prefix === undefined ? `…${length}` : `${prefix.slice(0, 3)}…${length}`;
}

/**
 * Keyed short hash: lets a reader see that two findings are the same value without a
 * dictionary attack on it (the key is random per run unless one is given).
 */
export function createValueHasher(key?: string): (value: string) => string {
  const secret = key ?? randomBytes(32).toString('hex');
  return (value) => createHmac('sha256', secret).update(value).digest('hex').slice(0, 10);
}
