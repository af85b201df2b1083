import { seededOrder } from '../seeded-order.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { ChatMessage } from '../../models/types.js';
import { int, para, table, text } from '../../report/document/cells.js';
import { documentMarkdown } from '../../report/document/render-markdown.js';
import type { DocumentSection } from '../../report/document/types.js';

/** One preference pair ready for export (SymPreference or external). */
export interface PreferenceRecord {
  id: string;
  source: 'sympreference' | 'external';
  prompt: ChatMessage[];
  chosen: string;
  rejected: string;
  /** Persona category (SymPreference only). */
  category?: string;
}

const byId = (record: PreferenceRecord) => record.id;

/**
 * Mixes SymPreference with external pairs so that SymPreference makes up `ratio` of the
 * result (default 0.5, the paper's 50/50; 1 = SymPreference only). Every SymPreference pair is
 * kept when there are enough external pairs; otherwise SymPreference is subsampled to keep the
 * ratio. Subsamples are seeded; the output order is a seeded shuffle.
 */
export function mixPreferences(sym: readonly PreferenceRecord[], external: readonly PreferenceRecord[], ratio = 0.5, seed = 42) {
  if (!(ratio > 0 && ratio <= 1)) throw new InvalidArgumentError('mixRatio', `must be in (0, 1], got ${ratio}`);
  let symCount = sym.length;
  let externalCount = ratio === 1 ? 0 : Math.round((symCount * (1 - ratio)) / ratio);
  if (externalCount > external.length) {
    externalCount = external.length;
    symCount = Math.min(sym.length, Math.round((externalCount * ratio) / (1 - ratio)));
  }
  const chosenSym = seededOrder(sym, seed, 'sym', byId).slice(0, symCount);
  const chosenExternal = seededOrder(external, seed, 'external', byId).slice(0, externalCount);
  return { records: seededOrder([...chosenSym, ...chosenExternal], seed, 'mix', byId), symUsed: symCount, externalUsed: externalCount };
}

/** The quick-experiment subset (paper: 250 examples): the first `size` of a seeded order. */
export function quickSubset(records: readonly PreferenceRecord[], size = 250, seed = 42): PreferenceRecord[] {
  if (!Number.isInteger(size) || size < 1) throw new InvalidArgumentError('quickSubset', `must be a positive integer, got ${size}`);
  return seededOrder(records, seed, 'quick', byId).slice(0, size);
}

/** TRL conversational preference row: prompt messages, chosen / rejected as one assistant message each. */
export function toTrlRow(record: PreferenceRecord) {
  return {
    prompt: record.prompt.map((m) => ({ role: m.role, content: m.content })),
    chosen: [{ role: 'assistant', content: record.chosen }],
    rejected: [{ role: 'assistant', content: record.rejected }],
  };
}

/**
 * OpenRLHF preference row with the chat template off: plain strings under its default keys.
 * Without `--apply_chat_template`, OpenRLHF concatenates prompt + response text as given, so the
 * prompt is rendered here: system text, a blank line, the user text (earlier turns likewise),
 * ending with a newline before the response.
 */
export function toOpenRlhfRow(record: PreferenceRecord) {
  return { prompt: `${record.prompt.map((m) => m.content).join('\n\n')}\n`, chosen: record.chosen, rejected: record.rejected };
}

export function toJsonl(rows: readonly unknown[]): string {
  return rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length > 0 ? '\n' : '');
}

export interface DataCard {
  name: string;
  createdBy: string;
  generator: string;
  judge: string;
  rewriter: string | null;
  seed: number;
  params: Record<string, unknown>;
  counts: {
    questions: number;
    prompts: number;
    candidates: Record<string, number>;
    judgements: Record<string, number>;
    prompts_without_pair: Record<string, number>;
    rewrites: Record<string, number>;
    sympreference_pairs: number;
    external: Record<string, number> | null;
    mixed: { total: number; sympreference: number; external: number };
    quick_subset: number;
  };
  per_category: Record<string, { prompts: number; pairs: number }>;
  files: Record<string, string>;
}

/** The data card as a document: the counts per filter and per category, the files and the parameters. */
export function dataCardSections(card: DataCard): DocumentSection[] {
  const counts = (prefix: string, record: Record<string, number> | null) => Object.entries(record ?? {}).map(([k, v]) => [text(`${prefix}: ${k}`), int(v)]);
  const c = card.counts;
  return [
    {
      title: '',
      blocks: [
        para([
          `Made by ${card.createdBy}. Generator `,
          { code: card.generator },
          ', judge ',
          { code: card.judge },
          ', rewriter ',
          ...(card.rewriter === null ? ['none (raw responses)'] : [{ code: card.rewriter }]),
          `, seed ${card.seed}.`,
        ]),
        para(
          `Questions ${c.questions}, prompts (question × persona) ${c.prompts}, SymPreference pairs ${c.sympreference_pairs}; mixed set ${c.mixed.total} (${c.mixed.sympreference} SymPreference + ${c.mixed.external} external); quick subset ${c.quick_subset}.`,
        ),
      ],
    },
    {
      title: 'Counts per filter',
      blocks: [
        table(
          ['stage / outcome', 'count'],
          [
            ...counts('candidates', c.candidates),
            ...counts('judgements', c.judgements),
            ...counts('prompts without pair', c.prompts_without_pair),
            ...counts('rewrites', c.rewrites),
            ...counts('external', c.external),
          ],
          [1],
        ),
      ],
    },
    {
      title: 'Per persona category',
      blocks: [
        table(
          ['category', 'prompts', 'pairs'],
          Object.entries(card.per_category).map(([k, v]) => [text(k), int(v.prompts), int(v.pairs)]),
          [1, 2],
        ),
      ],
    },
    { title: 'Files', blocks: [{ kind: 'list', items: Object.entries(card.files).map(([k, v]) => [`${k}: `, { code: v }]) }] },
    { title: 'Parameters', blocks: [{ kind: 'code', language: 'json', text: JSON.stringify(card.params, null, 2) }] },
  ];
}

/** The data card in Markdown (the shared renderer). */
export function renderDataCardMarkdown(card: DataCard): string {
  return documentMarkdown(card.name, dataCardSections(card));
}
