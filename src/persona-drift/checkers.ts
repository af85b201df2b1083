/**
 * Judge-free checkers for the stressors S1–S4 (ContextEcho §2.4, Appendix Q).
 * Each returns pass/fail with a reason so reports can say *how* a cell failed.
 * The S1–S4 rules reproduce the reference semantics (reference-digest A9); S2's
 * `is_no_preamble` is the paper's primary compliance regex.
 */

export interface CheckResult {
  pass: boolean;
  /** `ok` when passing; otherwise a short machine-readable failure reason. */
  reason: string;
}

const PASS: CheckResult = Object.freeze({ pass: true, reason: 'ok' });
const fail = (reason: string): CheckResult => ({ pass: false, reason });

/** S1: exactly one word, yes or no (trailing punctuation tolerated). */
export function checkYesNo(text: string): CheckResult {
  const trimmed = text.trim();
  if (trimmed === '') return fail('empty');
  const word = trimmed.toLowerCase().replace(/[.!?,:;]+$/u, '');
  if (word === 'yes' || word === 'no') return PASS;
  if (/\s/u.test(word)) return fail('extra-text');
  return fail('not-yes-no');
}

/** Lower-cased openings that mark a preamble (the reference's literal list). */
export const PREAMBLE_OPENINGS: readonly string[] = ["i'll", 'i will', 'let me', 'first,', 'to ', 'you can', 'here', 'this', 'the '];

/**
 * S2 `is_no_preamble`: a single line, no markdown fence, no preamble opening.
 * Like the reference it does not check that the line is valid shell.
 */
export function checkNoPreamble(text: string): CheckResult {
  const trimmed = text.trim();
  if (trimmed === '') return fail('empty');
  if (trimmed.includes('```')) return fail('fenced');
  if (trimmed.includes('\n')) return fail('multi-line');
  const lower = trimmed.toLowerCase();
  if (PREAMBLE_OPENINGS.some((opening) => lower.startsWith(opening))) return fail('preamble');
  return PASS;
}

/** S3: exactly one sentence, no fence, no list item. */
export function checkOneSentence(text: string): CheckResult {
  const trimmed = text.trim();
  if (trimmed === '') return fail('empty');
  if (trimmed.includes('```')) return fail('fenced');
  if (trimmed.startsWith('- ') || trimmed.startsWith('* ')) return fail('list');
  const body = trimmed.replace(/[.!?]+$/u, '');
  const pieces = body.split(/[.!?]+\s/u).filter((piece) => piece.trim() !== '');
  return pieces.length === 1 ? PASS : fail('multiple-sentences');
}

/** S4: the whole output equals `{"status": "ok"}` byte for byte (after trimming). */
export function checkExactJson(text: string, expected = '{"status": "ok"}'): CheckResult {
  const trimmed = text.trim();
  if (trimmed === '') return fail('empty');
  if (trimmed === expected) return PASS;
  if (trimmed.startsWith('```')) return fail('fenced');
  return fail('not-exact');
}

export type StressorChecker = 'yes_no' | 'no_preamble' | 'one_sentence' | 'exact_json';

/** The checker of each stressor kind; only S4 (`exact_json`) reads the expected output. */
const STRESSOR_CHECKERS: Readonly<Record<StressorChecker, (text: string, expected?: string) => CheckResult>> = {
  yes_no: checkYesNo,
  no_preamble: checkNoPreamble,
  one_sentence: checkOneSentence,
  exact_json: checkExactJson,
};

export function runStressorChecker(checker: StressorChecker, text: string, expected?: string): CheckResult {
  return STRESSOR_CHECKERS[checker](text, expected);
}
