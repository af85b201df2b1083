import { requireString } from './validate.js';

const STEP_OPEN = /<step_\d+>/g;
/** Whatever ends a step's content: a closing or opening step tag, `</think>` or `<answer>`. */
const STEP_END = /<\/step_\d+>|<step_\d+>|<\/think>|<answer>/g;

/**
 * The step contents of a response, as used by the format reward.
 *
 * A step opens with `<step_N>` (N = one or more ASCII digits, lowercase tag, no spaces). Its
 * content runs from just after that tag to the first of: a closing step tag `</step_K>`
 * (any K, so mismatched numbering still closes), the next opening step tag, `</think>`,
 * `<answer>`, or the end of the text (a final unterminated step is kept). The delimiting
 * tags are not part of the content, and leading/trailing whitespace is trimmed
 * (`String.prototype.trim`). Text outside steps is ignored. Contents may be empty.
 */
export function stepContents(text: string): string[] {
  requireString(text, 'text');
  const contents: string[] = [];
  for (const open of text.matchAll(STEP_OPEN)) {
    const start = open.index + open[0].length;
    STEP_END.lastIndex = start;
    const end = STEP_END.exec(text);
    contents.push(text.slice(start, end === null ? text.length : end.index).trim());
  }
  return contents;
}

/**
 * GRPO format reward r_fmt (DriftLens eq. 9 / eq. 20, docs/decisions.md#d11):
 * 0.25 · 1[`<step_` occurs] + 0.25 · 1[`<answer>` occurs] + 0.5 · 1[ℓ_min ≥ 2],
 * where ℓ_min is the minimum length, in Unicode code points, of the non-empty step
 * contents of {@link stepContents} (tags removed, whitespace trimmed). With no non-empty
 * step the last term is 0. Tag tests are literal and case-sensitive. Result ∈ {0, 0.25, 0.5, 0.75, 1}.
 *
 * @throws InvalidArgumentError naming `text` when it is not a string.
 */
export function formatReward(text: string): number {
  requireString(text, 'text');
  let reward = 0;
  if (text.includes('<step_')) reward += 0.25;
  if (text.includes('<answer>')) reward += 0.25;
  let shortest = Number.POSITIVE_INFINITY;
  for (const content of stepContents(text)) {
    if (content.length === 0) continue;
    const length = [...content].length;
    if (length < shortest) shortest = length;
  }
  if (shortest !== Number.POSITIVE_INFINITY && shortest >= 2) reward += 0.5;
  return reward;
}
