import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { readBuiltinDataFile } from './data-files.js';
import { parseInput } from './zod-input.js';

export interface KeywordHit {
  group: string;
  phrase: string;
  /** Character offset of the first match in the text. */
  index: number;
}

/** keep = a keep signal and no drop hit; drop = any drop hit; review = neither (left to the LLM rater). */
export type CurationVerdict = 'keep' | 'drop' | 'review';

export interface CurationResult {
  keep: KeywordHit[];
  drop: KeywordHit[];
  verdict: CurationVerdict;
}

const groupSchema = z.object({
  group: z.string().trim().min(1),
  description: z.string(),
  phrases: z.array(z.string().trim().min(1)).min(1),
});
const keywordsSchema = z.object({
  version: z.string().min(1),
  keep: z.array(groupSchema).min(1),
  drop: z.array(groupSchema).min(1),
});

export type CurationKeywords = z.output<typeof keywordsSchema>;
/** A keyword group from DriftLens App. A (Table 7 keep signals, Table 8 drop-lists). */
export type KeywordGroup = CurationKeywords['keep'][number];

export function parseCurationKeywords(text: string, file = 'curation-keywords.json'): CurationKeywords {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON (${(error as Error).message})`, { file });
  }
  return parseInput(keywordsSchema, value, { file, fallback: 'invalid' });
}

export function loadBuiltinCurationKeywords(): CurationKeywords {
  const data = readBuiltinDataFile('curationKeywords');
  return parseCurationKeywords(data.text, data.file);
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Regex for a phrase matched case-insensitively on word/phrase boundaries.
 * A boundary is required only at ends that are word characters, so "p =" and
 * "background:" still match before digits or spaces; internal whitespace is flexible.
 */
export function phraseRegex(phrase: string): RegExp {
  const trimmed = phrase.trim();
  const body = trimmed
    .split(/\s+/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('\\s+');
  const start = WORD_CHAR.test(trimmed[0] ?? '') ? '(?<![\\p{L}\\p{N}])' : '';
  const end = WORD_CHAR.test(trimmed.at(-1) ?? '') ? '(?![\\p{L}\\p{N}])' : '';
  return new RegExp(`${start}${body}${end}`, 'iu');
}

interface CompiledGroup {
  group: string;
  phrases: { phrase: string; regex: RegExp }[];
}

/** Pre-compiled keyword matcher; reuse it across many questions. */
export interface CurationMatcher {
  keep: CompiledGroup[];
  drop: CompiledGroup[];
}

export function compileCurationMatcher(keywords: CurationKeywords): CurationMatcher {
  const compile = (groups: KeywordGroup[]): CompiledGroup[] =>
    groups.map((group) => ({
      group: group.group,
      phrases: group.phrases.map((phrase) => ({ phrase, regex: phraseRegex(phrase) })),
    }));
  return { keep: compile(keywords.keep), drop: compile(keywords.drop) };
}

function findHits(text: string, groups: CompiledGroup[]): KeywordHit[] {
  const hits: KeywordHit[] = [];
  for (const group of groups) {
    for (const { phrase, regex } of group.phrases) {
      const match = regex.exec(text);
      if (match !== null) hits.push({ group: group.group, phrase, index: match.index });
    }
  }
  return hits;
}

/** Applies the keyword keep-signals and drop-lists to one question (pure). */
export function curateQuestion(text: string, matcher: CurationMatcher): CurationResult {
  const keep = findHits(text, matcher.keep);
  const drop = findHits(text, matcher.drop);
  const verdict: CurationVerdict = drop.length > 0 ? 'drop' : keep.length > 0 ? 'keep' : 'review';
  return { keep, drop, verdict };
}
