import { InputError, InvalidArgumentError } from '../core/errors.js';
import { parseCsvTable, toCsv } from '../core/csv.js';
import { seededOrder } from './seeded-order.js';

/**
 * Human annotation (DriftLens §2.1, App. B): each annotator fills a copy of a
 * sheet with a yes/no label and a confidence; three sheets are combined into
 * the unanimous (3/3) and relaxed (2/3) sets.
 */
export interface AnnotationItem {
  id: string;
  question: string;
  /** For orthogonality sheets (App. B.2): the persona paired with the question. */
  persona?: string;
}

export interface AnnotationLabel {
  itemId: string;
  annotator: string;
  /** true = the item passes the criterion (clear and unambiguous; persona irrelevant). */
  label: boolean;
  confidence: number | null;
  file: string;
  line: number;
}

export const ANNOTATION_PROMPTS = {
  question: 'label: yes if the question is clear, needs reasoning to answer, and does not depend on who asks; no otherwise. confidence: 0 to 1.',
  orthogonality:
    'label: yes if the persona is irrelevant to answering the question (two people differing only in it would answer alike); no otherwise. confidence: 0 to 1.',
} as const;

/** A blank sheet for annotators (CSV, RFC 4180 quoting). */
export function exportAnnotationSheet(items: readonly AnnotationItem[], kind: keyof typeof ANNOTATION_PROMPTS = 'question'): string {
  const withPersona = kind === 'orthogonality' || items.some((item) => item.persona !== undefined);
  const header = withPersona ? ['item_id', 'question', 'persona', 'label', 'confidence', 'comment'] : ['item_id', 'question', 'label', 'confidence', 'comment'];
  const ids = new Set<string>();
  const rows = items.map((item, index) => {
    if (ids.has(item.id)) throw new InvalidArgumentError(`items[${index}].id`, `duplicate id "${item.id}"`);
    ids.add(item.id);
    return withPersona ? [item.id, item.question, item.persona ?? '', '', '', ''] : [item.id, item.question, '', '', ''];
  });
  return toCsv(header, rows);
}

const YES = new Set(['yes', 'y', 'true', '1', 'keep', 'pass', 'irrelevant']);
const NO = new Set(['no', 'n', 'false', '0', 'drop', 'fail', 'relevant']);

function parseConfidence(raw: string, file: string, line: number): number | null {
  const value = raw.trim();
  if (value === '') return null;
  const percent = value.endsWith('%');
  const number = Number(percent ? value.slice(0, -1) : value);
  const scaled = percent ? number / 100 : number;
  if (value === '%' || !Number.isFinite(scaled) || scaled < 0 || scaled > 1) {
    throw new InputError(`confidence "${raw}" must be a number from 0 to 1 (or a percentage)`, {
      file,
      line,
      field: 'confidence',
    });
  }
  return scaled;
}

/** Reads one annotator's filled sheet. Every row needs a label; a malformed row names its line. */
export function parseAnnotationSheet(text: string, annotator: string, file = `<${annotator}>`): AnnotationLabel[] {
  const table = parseCsvTable(text, file);
  for (const column of ['item_id', 'label']) {
    if (!table.header.includes(column)) {
      throw new InputError(`missing column "${column}"`, { file, line: 1, field: 'header' });
    }
  }
  const seen = new Map<string, number>();
  return table.rows.map((row) => {
    const itemId = row.values.item_id!.trim();
    if (itemId === '') throw new InputError('empty item_id', { file, line: row.line, field: 'item_id' });
    const earlier = seen.get(itemId);
    if (earlier !== undefined) {
      throw new InputError(`item "${itemId}" labeled twice (first on line ${earlier})`, {
        file,
        line: row.line,
        field: 'item_id',
      });
    }
    seen.set(itemId, row.line);
    const rawLabel = row.values.label!.trim().toLowerCase();
    const label = YES.has(rawLabel) ? true : NO.has(rawLabel) ? false : null;
    if (label === null) {
      throw new InputError(rawLabel === '' ? 'missing label (use yes or no)' : `label "${row.values.label}" is not yes or no`, {
        file,
        line: row.line,
        field: 'label',
      });
    }
    const confidence = row.values.confidence === undefined ? null : parseConfidence(row.values.confidence, file, row.line);
    return { itemId, annotator, label, confidence, file, line: row.line };
  });
}

export interface AnnotationAgreement {
  itemId: string;
  yes: number;
  no: number;
  /** Mean of the annotators' confidences (null when none gave one). */
  meanConfidence: number | null;
  unanimous: boolean;
  twoOfThree: boolean;
}

export interface AnnotationSummary {
  items: AnnotationAgreement[];
  /** Items all annotators passed (and above the confidence threshold, when one is set). */
  unanimous: string[];
  /** Items at least two of three annotators passed (relaxed set). */
  twoOfThree: string[];
  /** Share of items on which the annotators did not all agree. */
  disagreementRate: number;
}

export interface AggregateOptions {
  /** Keep only items whose mean confidence is strictly above this (App. B.2 uses 0.58). */
  minMeanConfidence?: number;
}

/** Combines three annotators' sheets; every item must be labeled by every annotator. */
export function aggregateAnnotations(sheets: readonly (readonly AnnotationLabel[])[], options: AggregateOptions = {}): AnnotationSummary {
  if (sheets.length !== 3) throw new InvalidArgumentError('sheets', `expected three annotators' sheets, got ${sheets.length}`);
  const byItem = new Map<string, AnnotationLabel[]>();
  for (const sheet of sheets) for (const label of sheet) byItem.set(label.itemId, [...(byItem.get(label.itemId) ?? []), label]);
  const annotators = sheets.map((sheet) => sheet[0]?.annotator ?? '?');
  if (new Set(annotators).size !== 3) throw new InvalidArgumentError('sheets', 'the three sheets must come from three different annotators');

  const items: AnnotationAgreement[] = [];
  for (const [itemId, labels] of byItem) {
    if (labels.length !== 3) {
      const present = new Set(labels.map((label) => label.annotator));
      const missing = annotators.filter((annotator) => !present.has(annotator));
      const where = labels[0]!;
      throw new InputError(`item "${itemId}" has no label from ${missing.join(', ')}`, {
        file: where.file,
        line: where.line,
        field: 'item_id',
      });
    }
    const yes = labels.filter((label) => label.label).length;
    const confidences = labels.map((label) => label.confidence).filter((value): value is number => value !== null);
    const meanConfidence = confidences.length === 0 ? null : confidences.reduce((a, b) => a + b, 0) / confidences.length;
    const confident = options.minMeanConfidence === undefined || (meanConfidence !== null && meanConfidence > options.minMeanConfidence);
    items.push({ itemId, yes, no: 3 - yes, meanConfidence, unanimous: yes === 3 && confident, twoOfThree: yes >= 2 && confident });
  }
  const disagreements = items.filter((item) => item.yes !== 0 && item.yes !== 3).length;
  return {
    items,
    unanimous: items.filter((item) => item.unanimous).map((item) => item.itemId),
    twoOfThree: items.filter((item) => item.twoOfThree).map((item) => item.itemId),
    disagreementRate: items.length === 0 ? 0 : disagreements / items.length,
  };
}

/** Separator of question and stimulus ids in orthogonality item ids. */
export const ORTHOGONALITY_ID_SEPARATOR = '|';

/**
 * Items for the persona-orthogonality annotation (App. B.2): each question
 * paired with `perCategory` personas of every persona category, chosen by a
 * seeded hash so the sheet is reproducible. Item id = `questionId|stimulusId`.
 */
export function buildOrthogonalityItems(
  questions: readonly { id: string; text: string }[],
  personas: readonly { id: string; text: string; category: string; tier: string }[],
  options: { perCategory?: number; seed?: number } = {},
): AnnotationItem[] {
  const perCategory = options.perCategory ?? 1;
  if (!Number.isInteger(perCategory) || perCategory < 1) throw new InvalidArgumentError('perCategory', 'must be a positive integer');
  const seed = options.seed ?? 42;
  const byCategory = new Map<string, { id: string; text: string }[]>();
  for (const persona of personas) {
    if (persona.tier !== 'persona') continue;
    byCategory.set(persona.category, [...(byCategory.get(persona.category) ?? []), persona]);
  }
  const items: AnnotationItem[] = [];
  for (const question of questions) {
    for (const members of byCategory.values()) {
      for (const persona of seededOrder(members, seed, question.id, (member) => member.id).slice(0, perCategory)) {
        items.push({ id: `${question.id}${ORTHOGONALITY_ID_SEPARATOR}${persona.id}`, question: question.text, persona: persona.text });
      }
    }
  }
  return items;
}
