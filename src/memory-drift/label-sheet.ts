import { parseCsvTable, toCsv } from '../core/csv.js';
import { InputError, InvalidArgumentError, StatisticsError } from '../core/errors.js';
import type { Maybe } from '../core/maybe.js';
import { seededRandom } from '../core/random.js';
import { int, num, para, table, text } from '../report/document/cells.js';
import { documentMarkdown } from '../report/document/render-markdown.js';
import type { DocumentCell, DocumentSection } from '../report/document/types.js';
import { agreement } from '../stats/agreement.js';
import { normalizeLabel } from './labeler.js';
import { parseSymbol } from './ontology.js';

/**
 * Human check of the labeler's step labels (DriftLens App. C.5, and the human side of the
 * ontology refinement in App. C.1–C.2): a seeded sample of labelled reasoning steps goes out as
 * a CSV sheet, a person labels each step with an ontology symbol (or `ambiguous`), and the sheet
 * comes back to be compared with the labeler: agreement, Cohen's κ over all symbols, and a
 * one-versus-rest κ per root category and per subcategory. Pure: text in, text and numbers out.
 */

/** One labelled step as it leaves for review. */
export interface StepLabelItem {
  /** `<generation key prefix>#<step>`: unique within a run. */
  itemId: string;
  questionId: string;
  /** The question's text when known ('' otherwise). */
  question: string;
  target: string;
  condition: string;
  /** 1-based step index within the response. */
  step: number;
  stepText: string;
  /** The labeler's symbol (`Category/Subcategory` or `unmapped`). */
  modelLabel: string;
}

/** What `sampleStepLabels` reads of a memory run's records (observations.ts MemorySampleRecord). */
export interface LabelledStepSource {
  generationKey: string;
  outcome: string;
  steps: readonly string[];
  sample: { question: string; target: string; condition: string; symbols: readonly string[] | null };
}

/**
 * A seeded random sample of `n` labelled steps (App. C.5 inspects 100). Only answers whose labels
 * align one-to-one with their extracted steps are eligible (a whole-response labeling has no
 * step text to show). Items come in the sampled order, so a reviewer does not see a response's
 * steps in a row.
 */
export function sampleStepLabels(
  records: readonly LabelledStepSource[],
  options: { n: number; seed: number; questions?: ReadonlyMap<string, string> },
): StepLabelItem[] {
  if (!Number.isInteger(options.n) || options.n < 1) throw new InvalidArgumentError('n', `must be a positive integer, got ${options.n}`);
  const pool: StepLabelItem[] = [];
  for (const record of records) {
    const symbols = record.sample.symbols;
    if (record.outcome !== 'labelled' || symbols === null || symbols.length !== record.steps.length) continue;
    record.steps.forEach((text, i) => {
      pool.push({
        itemId: `${record.generationKey.slice(0, 16)}#${i + 1}`,
        questionId: record.sample.question,
        question: options.questions?.get(record.sample.question) ?? '',
        target: record.sample.target,
        condition: record.sample.condition,
        step: i + 1,
        stepText: text,
        modelLabel: symbols[i]!,
      });
    });
  }
  // Fisher–Yates over the whole pool, then the first n: every subset of size n equally likely.
  const random = seededRandom(options.seed);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, options.n);
}

export const STEP_SHEET_INSTRUCTIONS =
  'human_label: the ontology symbol (Category/Subcategory, or unmapped) that fits the step, or "ambiguous" when two fit equally; ' +
  'leave blank to skip. With the model label shown, "agree" copies it.';

/** The review sheet (CSV). `blind` leaves the labeler's label out, so the reviewer is not anchored by it. */
export function exportStepLabelSheet(items: readonly StepLabelItem[], options: { blind?: boolean } = {}): string {
  const header = ['item_id', 'question', 'step', 'step_text', ...(options.blind ? [] : ['model_label']), 'human_label', 'comment'];
  const rows = items.map((item) => [
    item.itemId,
    item.question || item.questionId,
    item.step,
    item.stepText,
    ...(options.blind ? [] : [item.modelLabel]),
    '',
    '',
  ]);
  return toCsv(header, rows);
}

/** The answer key kept beside the sheet: what the labeler said about each item. */
export interface StepLabelKey {
  kind: 'echolens-step-label-key';
  runId: string;
  labeler: string;
  blind: boolean;
  /** Every symbol of the run's ontology (labels outside it are refused on import). */
  symbols: string[];
  items: StepLabelItem[];
}

export function parseStepLabelKey(text: string, file: string): StepLabelKey {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`not JSON (${(error as Error).message})`, { file });
  }
  const key = value as Partial<StepLabelKey> | null;
  if (key === null || typeof key !== 'object' || key.kind !== 'echolens-step-label-key') {
    throw new InputError('not an echolens step-label key (written by `memory label-sheet export`)', { file, field: 'kind' });
  }
  if (!Array.isArray(key.items) || !Array.isArray(key.symbols)) throw new InputError('must have "items" and "symbols" arrays', { file, field: 'items' });
  return key as StepLabelKey;
}

export type HumanLabel = { label: string; line: number } | { label: 'ambiguous'; line: number };

/**
 * Reads a filled sheet. Accepted `human_label` values: a symbol of the ontology (letter case and
 * spacing around `/` are forgiven), `unmapped`, `ambiguous` (or `?`), `agree` (the model label;
 * only where the sheet shows it), or blank (not reviewed, left out). Anything else, an unknown
 * item id or a repeated one is an input error naming the line.
 */
export function parseStepLabelSheet(text: string, file: string, key: StepLabelKey): Map<string, HumanLabel> {
  const table = parseCsvTable(text, file);
  for (const column of ['item_id', 'human_label']) {
    if (!table.header.includes(column)) throw new InputError(`missing column "${column}"`, { file, line: 1, field: 'header' });
  }
  const canonical = new Map<string, string>();
  for (const symbol of [...key.symbols, 'unmapped']) canonical.set(normalizeLabel(symbol), symbol);
  const byId = new Map(key.items.map((item) => [item.itemId, item]));
  const labels = new Map<string, HumanLabel>();
  for (const row of table.rows) {
    const id = row.values.item_id!.trim();
    const item = byId.get(id);
    if (item === undefined) throw new InputError(`item "${id}" is not in the key`, { file, line: row.line, field: 'item_id' });
    if (labels.has(id)) throw new InputError(`item "${id}" appears twice`, { file, line: row.line, field: 'item_id' });
    const raw = row.values.human_label!.trim();
    if (raw === '') continue;
    const lower = raw.toLowerCase();
    const at = { file, line: row.line, field: 'human_label' };
    let label: string | undefined;
    if (lower === 'ambiguous' || lower === '?') label = 'ambiguous';
    else if (lower === 'agree') {
      if (key.blind) throw new InputError('"agree" needs the model label, which a blind sheet does not show; write the symbol', at);
      label = item.modelLabel;
    } else label = canonical.get(normalizeLabel(raw));
    if (label === undefined) throw new InputError(`"${raw}" is not a symbol of the ontology (Category/Subcategory, unmapped, ambiguous, agree or blank)`, at);
    labels.set(id, { label, line: row.line });
  }
  return labels;
}

/** κ of one category against the rest (binary: the label is this category or not). */
export interface CategoryAgreement {
  category: string;
  /** Steps the labeler / the human put in this category. */
  model: number;
  human: number;
  /** Steps both put in it. */
  both: number;
  kappa: Maybe<number>;
}

export interface StepLabelAgreement {
  /** Items in the key. */
  items: number;
  /** Items with a human label (ambiguous included). */
  reviewed: number;
  ambiguous: number;
  /** Reviewed, not ambiguous: the steps compared. */
  compared: number;
  agreed: number;
  /** agreed / compared (App. C.5 reports this share). */
  exact: Maybe<number>;
  /** Cohen's κ (unweighted) over the full symbols. */
  kappa: Maybe<number>;
  /** Agreement and κ on the root category only (Social, Practical, Protective, Personal, unmapped). */
  rootExact: Maybe<number>;
  rootKappa: Maybe<number>;
  /** One-versus-rest κ per root category, then per symbol (subcategory). */
  perRoot: CategoryAgreement[];
  perSymbol: CategoryAgreement[];
}

const rootOf = (symbol: string) => parseSymbol(symbol)?.category ?? symbol;

function kappaOf(model: readonly string[], human: readonly string[]): Maybe<number> {
  if (model.length === 0) return { error: 'no steps compared' };
  const categories = [...new Set([...model, ...human])].sort();
  if (categories.length < 2) return { error: 'both raters used one and the same label for every step; chance agreement is 1 and κ is undefined' };
  const index = new Map(categories.map((c, i) => [c, i]));
  try {
    return agreement(
      model.map((m) => index.get(m)!),
      human.map((h) => index.get(h)!),
      { categories: categories.map((_, i) => i) },
    ).kappa;
  } catch (error) {
    if (error instanceof StatisticsError) return { error: error.message.replace(/^agreement: /, '') };
    throw error;
  }
}

function perCategory(model: readonly string[], human: readonly string[], categories: readonly string[]): CategoryAgreement[] {
  return categories.map((category) => {
    const m = model.map((x) => (x === category ? 'in' : 'out'));
    const h = human.map((x) => (x === category ? 'in' : 'out'));
    const both = model.filter((x, i) => x === category && human[i] === category).length;
    const kappa: Maybe<number> = m.every((x) => x === 'out') && h.every((x) => x === 'out') ? { error: 'neither rater used this category' } : kappaOf(m, h);
    return { category, model: m.filter((x) => x === 'in').length, human: h.filter((x) => x === 'in').length, both, kappa };
  });
}

/** Compares the human labels with the labeler's (ambiguous and blank items left out of κ). */
export function stepLabelAgreement(key: StepLabelKey, labels: ReadonlyMap<string, HumanLabel>): StepLabelAgreement {
  const model: string[] = [];
  const human: string[] = [];
  let ambiguous = 0;
  for (const item of key.items) {
    const label = labels.get(item.itemId);
    if (label === undefined) continue;
    if (label.label === 'ambiguous') {
      ambiguous++;
      continue;
    }
    model.push(item.modelLabel);
    human.push(label.label);
  }
  const compared = model.length;
  const agreed = model.filter((m, i) => m === human[i]).length;
  const rootModel = model.map(rootOf);
  const rootHuman = human.map(rootOf);
  const rootAgreed = rootModel.filter((m, i) => m === rootHuman[i]).length;
  const share = (k: number): Maybe<number> => (compared === 0 ? { error: 'no steps compared' } : k / compared);
  const symbols = [...key.symbols, 'unmapped'];
  const roots = [...new Set(symbols.map(rootOf))];
  return {
    items: key.items.length,
    reviewed: compared + ambiguous,
    ambiguous,
    compared,
    agreed,
    exact: share(agreed),
    kappa: kappaOf(model, human),
    rootExact: share(rootAgreed),
    rootKappa: kappaOf(rootModel, rootHuman),
    perRoot: perCategory(rootModel, rootHuman, roots),
    perSymbol: perCategory(model, human, symbols),
  };
}

/** A κ or an agreement share to 3 decimals, or why it could not be computed. */
const shown = (value: Maybe<number>): DocumentCell => (typeof value === 'number' ? num(value, 'fixed', 3) : text(`— (${value.error})`));

/** The human check of step labels as a document: agreement and κ overall, by root category and per category. */
export function stepLabelAgreementSections(result: StepLabelAgreement, key: StepLabelKey): DocumentSection[] {
  return [
    {
      title: '',
      blocks: [
        para(
          `Run ${key.runId}, labeler ${key.labeler}; ${key.blind ? 'blind sheet (model labels hidden)' : 'sheet showing the model labels'}. ` +
            `${result.items} steps sent, ${result.reviewed} reviewed (${result.ambiguous} ambiguous), ${result.compared} compared: ` +
            `${result.agreed} agreed, ${result.compared - result.agreed} disagreed.`,
        ),
        table(
          ['level', 'agreement', "Cohen's κ"],
          [
            [text('symbol (category/subcategory)'), shown(result.exact), shown(result.kappa)],
            [text('root category'), shown(result.rootExact), shown(result.rootKappa)],
          ],
          [1, 2],
        ),
      ],
    },
    {
      title: 'Per category (one versus the rest)',
      blocks: [
        table(
          ['category', 'labeler', 'human', 'both', 'κ'],
          [...result.perRoot, ...result.perSymbol].map((c) => [text(c.category), int(c.model), int(c.human), int(c.both), shown(c.kappa)]),
          [1, 2, 3, 4],
        ),
      ],
    },
  ];
}

/** The human check in Markdown (the shared renderer). */
export function renderStepLabelAgreementMarkdown(result: StepLabelAgreement, key: StepLabelKey): string {
  return documentMarkdown('Human check of step labels (DriftLens App. C.5)', stepLabelAgreementSections(result, key));
}
