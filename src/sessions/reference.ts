import { InvalidArgumentError } from '../core/errors.js';
import { seededRandom } from '../core/random.js';
import type { ChatMessage } from '../models/types.js';
import { buildPrefix } from './prefix.js';
import { ASSISTANT_HEADER, optionsOf, type RenderedPrefix, type RenderOptions, renderParts, SUMMARY_HEADER, USER_HEADER } from './render.js';
import { codePointLength, headCodePoints } from './text.js';
import type { Session } from './types.js';

/**
 * Reference contexts that stand in for the real prefix (pure, deterministic for a seed):
 * - `filler`: same messages, roles, role headers and per-message lengths, text replaced by
 *   Lorem-ipsum-style filler (docs/decisions.md#d16);
 * - `filler-flat`: the reference's control, one block of filler of the same total length;
 * - `shuffled-real`: the same real parts in a seeded shuffled order, same window;
 * - `unrelated-session`: another session's window of the same length;
 * - `scratch`: no context.
 */

export type ReferenceKind = 'filler' | 'filler-flat' | 'shuffled-real' | 'unrelated-session' | 'scratch';
export const REFERENCE_KINDS: readonly ReferenceKind[] = ['filler', 'filler-flat', 'shuffled-real', 'unrelated-session', 'scratch'];
export const DEFAULT_SEED = 42;

export interface ReferencePrefix {
  kind: ReferenceKind;
  messages: ChatMessage[];
  /** Context characters (code points), acknowledgement excluded. */
  chars: number;
  seed?: number;
  notes: string[];
}

/** The words of the filler (the continuation simulation recognises filler by them). */
export const LOREM_WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna ' +
  'aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute ' +
  'irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident ' +
  'sunt culpa qui officia deserunt mollit anim id est laborum'
).split(' ');

/** Exactly `length` characters of Lorem-ipsum-style sentences, the same for the same seed. */
export function loremFiller(length: number, seed: number): string {
  if (!Number.isInteger(length) || length < 0) throw new InvalidArgumentError('length', `must be a non-negative integer, got ${length}`);
  const random = seededRandom(seed);
  const out: string[] = [];
  let size = 0;
  while (size < length) {
    const words = 6 + Math.floor(random() * 10);
    const sentence: string[] = [];
    for (let i = 0; i < words; i += 1) sentence.push(LOREM_WORDS[Math.floor(random() * LOREM_WORDS.length)]!);
    const first = sentence[0]!;
    sentence[0] = first.charAt(0).toUpperCase() + first.slice(1);
    const text = `${sentence.join(' ')}.`;
    size += (out.length > 0 ? 1 : 0) + text.length;
    out.push(text);
  }
  return out.join(' ').slice(0, length);
}

const HEADER_LINE = new RegExp(`(?:^|\\n\\n)(?:${[USER_HEADER, ASSISTANT_HEADER, SUMMARY_HEADER].map(escapeRegex).join('|')})\\n`, 'g');

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces everything but the role headers of a flat prefix with filler of equal length. */
function fillFlatText(text: string, seed: number): string {
  let out = '';
  let last = 0;
  let piece = 0;
  for (const match of text.matchAll(HEADER_LINE)) {
    const start = match.index ?? 0;
    out += loremFiller(codePointLength(text.slice(last, start)), seed + piece);
    out += match[0];
    piece += 1;
    last = start + match[0].length;
  }
  out += loremFiller(codePointLength(text.slice(last)), seed + piece);
  return out;
}

/** Structure-matched filler (docs/decisions.md#d16). */
export function fillerContext(real: RenderedPrefix, options: { seed?: number } = {}): ReferencePrefix {
  const seed = options.seed ?? DEFAULT_SEED;
  const ackIndex = real.acknowledgementAppended ? real.messages.length - 1 : -1;
  const messages = real.messages.map((m, i): ChatMessage => {
    if (i === ackIndex) return { ...m };
    const content = real.mode === 'flat' ? fillFlatText(m.content, seed + i * 7919) : loremFiller(codePointLength(m.content), seed + i * 7919);
    return { role: m.role, content };
  });
  return { kind: 'filler', messages, chars: real.chars, seed, notes: [] };
}

const FLAT_TEMPLATE =
  'The following passage is placeholder text used as a length-matched control; it describes no task, no code and no conversation. ' +
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ' +
  'Sphinx of black quartz, judge my vow. Pack my box with five dozen liquor jugs. How vexingly quick daft zebras jump. ' +
  'The five boxing wizards jump quickly while a quick brown fox jumps over the lazy dog. ';

/**
 * The reference's character-only control: one user block of template filler, then the
 * acknowledgement. `template` replaces echolens's filler sentence (e.g. the authors' own).
 */
export function fillerFlatContext(real: RenderedPrefix, template: string = FLAT_TEMPLATE): ReferencePrefix {
  if (real.chars === 0) return { kind: 'filler-flat', messages: [], chars: 0, notes: [] };
  if (template === '') throw new InvalidArgumentError('template', 'must be non-empty');
  const text = headCodePoints(template.repeat(Math.ceil(real.chars / codePointLength(template))), real.chars);
  return {
    kind: 'filler-flat',
    messages: [
      { role: 'user', content: text },
      { role: 'assistant', content: real.settings.acknowledgement },
    ],
    chars: real.chars,
    notes: [],
  };
}

/** The real prefix's render settings for a window of its length; untruncated has no window: the turns renderer with whole tool payloads. */
function windowOptions(real: RenderedPrefix): RenderOptions {
  const renderOptions = optionsOf(real.settings);
  if (real.settings.mode === 'untruncated') {
    renderOptions.mode = 'turns';
    renderOptions.toolPayloadChars = Number.MAX_SAFE_INTEGER;
  }
  return renderOptions;
}

/** The same real parts in a seeded shuffled order, rendered with the same settings and window. */
export function shuffledRealContext(real: RenderedPrefix, options: { seed?: number } = {}): ReferencePrefix {
  const seed = options.seed ?? DEFAULT_SEED;
  const parts = [...real.parts];
  const random = seededRandom(seed);
  for (let i = parts.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  // The same window as the real prefix: shuffling changes how turns merge, so cap at its length.
  const renderOptions = windowOptions(real);
  if (real.chars > 0) renderOptions.maxChars = real.chars;
  const rendered = renderParts(parts, renderOptions);
  const notes: string[] = [];
  if (rendered.chars !== real.chars) notes.push(`shuffled window has ${rendered.chars} characters, the real one ${real.chars}`);
  return { kind: 'shuffled-real', messages: rendered.messages, chars: rendered.chars, seed, notes };
}

/**
 * Another session's window of the same length, same mode: its context at `end`
 * (default: the end of that session) cut to the real prefix's character count.
 */
export function unrelatedSessionContext(real: RenderedPrefix, other: Session, options: { end?: number } = {}): ReferencePrefix {
  if (real.chars === 0) return { kind: 'unrelated-session', messages: [], chars: 0, notes: [] };
  const renderOptions = windowOptions(real);
  renderOptions.maxChars = real.chars;
  const rendered = buildPrefix(other, options.end ?? other.messages.length, renderOptions);
  const notes: string[] = [`from ${other.file} (${rendered.end} messages)`];
  if (rendered.chars < real.chars) notes.push(`the other session is shorter: ${rendered.chars} of ${real.chars} characters`);
  return { kind: 'unrelated-session', messages: rendered.messages, chars: rendered.chars, notes };
}

export function scratchContext(): ReferencePrefix {
  return { kind: 'scratch', messages: [], chars: 0, notes: [] };
}

/** One entry point for all reference kinds. */
export function referenceContext(
  kind: ReferenceKind,
  real: RenderedPrefix,
  options: { seed?: number; other?: Session; otherEnd?: number; flatTemplate?: string } = {},
): ReferencePrefix {
  switch (kind) {
    case 'filler':
      return fillerContext(real, options.seed === undefined ? {} : { seed: options.seed });
    case 'filler-flat':
      return fillerFlatContext(real, options.flatTemplate);
    case 'shuffled-real':
      return shuffledRealContext(real, options.seed === undefined ? {} : { seed: options.seed });
    case 'unrelated-session':
      if (!options.other) throw new InvalidArgumentError('other', 'unrelated-session needs another session');
      return unrelatedSessionContext(real, options.other, options.otherEnd === undefined ? {} : { end: options.otherEnd });
    case 'scratch':
      return scratchContext();
    default:
      throw new InvalidArgumentError('kind', `must be one of ${REFERENCE_KINDS.join(', ')}, got ${String(kind)}`);
  }
}
