/**
 * Step segmentation before labeling (docs/decisions.md#d7). Cascade: `<step_N>` tags →
 * numbered list → paragraphs → sentences (Intl.Segmenter). The method used is
 * returned so it can be recorded per cell.
 */
export type StepMethod = 'tags' | 'numbered' | 'paragraphs' | 'sentences' | 'none';

export interface StepExtraction {
  steps: string[];
  method: StepMethod;
  /** Which text the steps came from: the visible output or the separate reasoning trace. */
  source: 'text' | 'reasoning';
  /** Contents of `<answer>…</answer>` (an unterminated answer runs to the end), or null. */
  answer: string | null;
}

export interface StepExtractionOptions {
  /** Reasoning trace returned apart from the text (reasoning models). */
  reasoning?: string | null;
  /**
   * auto (default): tags in the text, else the reasoning trace (whole cascade), else the
   * text's fallbacks. text: the text only. reasoning: the reasoning trace only.
   */
  source?: 'auto' | 'text' | 'reasoning';
  /** Locale for sentence segmentation (default `en`). */
  locale?: string;
}

const STEP_OPEN = /<step[_ -]?(\d+)\s*>/gi;
const STEP_CLOSE = /<\/step[_ -]?\d*\s*>/gi;
const STOP_MARKERS = /<\/think\s*>|<answer\s*>|<\/step[_ -]?\d*\s*>/i;

/** `<step_N>` contents; closing tags stripped; a final unterminated step is kept. */
export function extractTaggedSteps(text: string): string[] {
  const openings = [...text.matchAll(STEP_OPEN)];
  const steps: string[] = [];
  openings.forEach((opening, index) => {
    const start = opening.index! + opening[0].length;
    const nextOpen = openings[index + 1]?.index ?? text.length;
    let segment = text.slice(start, nextOpen);
    const stop = STOP_MARKERS.exec(segment);
    if (stop !== null) segment = segment.slice(0, stop.index);
    const content = segment.replace(STEP_CLOSE, '').trim();
    if (content !== '') steps.push(content);
  });
  return steps;
}

export function extractAnswer(text: string): string | null {
  const match = /<answer\s*>([\s\S]*?)(?:<\/answer\s*>|$)/i.exec(text);
  return match === null ? null : match[1]!.trim();
}

/** The reasoning part of an untagged output: inside <think>, else everything outside <answer>. */
function reasoningBody(text: string): string {
  const think = /<think\s*>([\s\S]*?)(?:<\/think\s*>|<answer\s*>|$)/i.exec(text);
  if (think !== null) return think[1]!;
  const withoutAnswer = text.replace(/<answer\s*>[\s\S]*?(?:<\/answer\s*>|$)/i, '').replace(/<\/?think\s*>/gi, '');
  return withoutAnswer.trim() === '' ? (extractAnswer(text) ?? '') : withoutAnswer;
}

const NUMBERED_ITEM = /^\s*(?:[*_]{1,2})?(?:step\s*)?(\d{1,3})(?:[*_]{1,2})?\s*[.):]\s*(?:[*_]{1,2})?\s*(\S.*)?$/i;

/** Items of a numbered list that starts at 1 and counts up by one (continuation lines join their item). */
export function extractNumberedSteps(text: string): string[] {
  const items: string[][] = [];
  let expected = 1;
  for (const line of text.split(/\r?\n/)) {
    const match = NUMBERED_ITEM.exec(line);
    if (match !== null && Number(match[1]) === expected) {
      items.push([match[2] ?? '']);
      expected += 1;
      continue;
    }
    const current = items.at(-1);
    if (current !== undefined) current.push(line);
  }
  const steps = items.map((lines) => lines.join('\n').trim()).filter((step) => step !== '');
  return steps.length >= 2 ? steps : [];
}

export function extractParagraphSteps(text: string): string[] {
  const paragraphs = text
    .split(/\r?\n\s*\r?\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  return paragraphs.length >= 2 ? paragraphs : [];
}

/** Characters handed to the sentence segmenter at once (it slows down superlinearly on long strings). */
const SEGMENT_WINDOW = 4_096;

export function extractSentenceSteps(text: string, locale = 'en'): string[] {
  const segmenter = new Intl.Segmenter(locale, { granularity: 'sentence' });
  if (text.length <= SEGMENT_WINDOW) return [...segmenter.segment(text)].map((part) => part.segment.trim()).filter((sentence) => sentence !== '');
  // Linear time on long text: a window at a time, keeping every sentence but the window's last,
  // which is segmented again with the text that follows it (a sentence break depends only on
  // the characters around it, so the sentences are those of the whole text).
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let size = SEGMENT_WINDOW;
    let end = Math.min(text.length, start + size);
    let parts = [...segmenter.segment(text.slice(start, end))];
    // One sentence longer than the window: widen it until the sentence ends (or the text does).
    while (parts.length === 1 && end < text.length) {
      size *= 2;
      end = Math.min(text.length, start + size);
      parts = [...segmenter.segment(text.slice(start, end))];
    }
    const last = parts.length > 1 && end < text.length ? parts.length - 1 : parts.length;
    for (let i = 0; i < last; i++) {
      const sentence = (parts[i] as Intl.SegmentData).segment.trim();
      if (sentence !== '') out.push(sentence);
    }
    start = last === parts.length ? end : start + (parts[last] as Intl.SegmentData).index;
  }
  return out;
}

function cascade(text: string, source: 'text' | 'reasoning', locale: string): StepExtraction {
  const answer = source === 'text' ? extractAnswer(text) : null;
  const tagged = extractTaggedSteps(text);
  if (tagged.length > 0) return { steps: tagged, method: 'tags', source, answer };
  const body = source === 'text' ? reasoningBody(text) : text;
  const numbered = extractNumberedSteps(body);
  if (numbered.length > 0) return { steps: numbered, method: 'numbered', source, answer };
  const paragraphs = extractParagraphSteps(body);
  if (paragraphs.length > 0) return { steps: paragraphs, method: 'paragraphs', source, answer };
  const sentences = extractSentenceSteps(body, locale);
  if (sentences.length > 0) return { steps: sentences, method: 'sentences', source, answer };
  return { steps: [], method: 'none', source, answer };
}

/** Segments a model output (and optionally its separate reasoning trace) into steps. */
export function extractSteps(text: string, options: StepExtractionOptions = {}): StepExtraction {
  const locale = options.locale ?? 'en';
  const reasoning = options.reasoning ?? '';
  const mode = options.source ?? 'auto';
  if (mode === 'reasoning') return cascade(reasoning, 'reasoning', locale);
  if (mode === 'text') return cascade(text, 'text', locale);
  const tagged = extractTaggedSteps(text);
  if (tagged.length > 0) return { steps: tagged, method: 'tags', source: 'text', answer: extractAnswer(text) };
  if (reasoning.trim() !== '') {
    const fromReasoning = cascade(reasoning, 'reasoning', locale);
    if (fromReasoning.steps.length > 0) return { ...fromReasoning, answer: extractAnswer(text) ?? (text.trim() || null) };
  }
  return cascade(text, 'text', locale);
}
