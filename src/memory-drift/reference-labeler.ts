import type { ChatMessage } from '../models/types.js';
import { fillTemplate } from '../materials/python-literal.js';
import type { LabelerParseOptions, LabelerParseResult } from './labeler.js';
import type { ReferenceMemoryTexts } from './materials.js';
import { makeSymbol, type Ontology, UNMAPPED } from './ontology.js';

/**
 * The labeler as the DriftLens authors' code asks it (their mapping prompt,
 * read from their repository) and as their code reads its answer: the JSON
 * array inside the first `<answer>` block, or else the first array of
 * objects; each item's `symbol` is a subcategory name. Symbols are then
 * mapped to echolens's `Category/Subcategory` symbols.
 */

/** One user turn: the mapping prompt filled with the ontology (the reference's rendering) and the passage. */
export function buildReferenceLabelerMessages(passage: string, texts: Pick<ReferenceMemoryTexts, 'mappingTemplate' | 'ontologyText'>): ChatMessage[] {
  return [{ role: 'user', content: fillTemplate(texts.mappingTemplate, { ontology: texts.ontologyText, reasoning: passage }) }];
}

/** The passage the reference labeler reads: the whole response, or the extracted steps one per line. */
export function referencePassage(input: { passage: string } | { steps: readonly string[] }): string {
  return 'passage' in input ? input.passage : input.steps.join('\n');
}

function candidates(text: string): string[] {
  const out: string[] = [];
  const answer = /<answer>\s*([\s\S]*?)\s*<\/answer>/u.exec(text);
  if (answer) out.push(answer[1] as string);
  const array = /(\[\s*\{[\s\S]*?\}\s*\])/u.exec(text);
  if (array) out.push(array[1] as string);
  return out;
}

function normalize(name: string): string {
  return name.trim().replace(/\s+/gu, ' ').toLowerCase();
}

/** The labeler's parse options with the ontology itself (the answer names subcategories, matched within it). */
export type ReferenceParseOptions = LabelerParseOptions & { ontology: Ontology };

/** Reads a reference-format labeler answer into echolens symbols. */
export function parseReferenceLabelerOutput(text: string, options: ReferenceParseOptions): LabelerParseResult {
  if (text.trim() === '') return { ok: false, reason: 'empty', detail: 'empty output' };
  let items: Array<{ symbol: string; category: string | null }> = [];
  for (const candidate of candidates(text)) {
    let value: unknown;
    try {
      value = JSON.parse(candidate.replaceAll('""', '"'));
    } catch {
      continue;
    }
    if (!Array.isArray(value)) continue;
    const found = value
      .filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object' && !Array.isArray(item) && 'symbol' in item)
      .map((item) => ({ symbol: String(item.symbol), category: typeof item.category === 'string' ? item.category : null }));
    if (found.length > 0) {
      items = found;
      break;
    }
  }
  if (items.length === 0) return { ok: false, reason: 'no_json', detail: 'no JSON array of {symbol} objects found' };
  if (options.stepCount !== null && items.length !== options.stepCount) {
    return { ok: false, reason: 'wrong_count', detail: `${items.length} labels for ${options.stepCount} steps` };
  }
  const bySub = new Map<string, Array<{ category: string; symbol: string }>>();
  for (const category of options.ontology.categories) {
    for (const sub of category.subcategories) {
      const key = normalize(sub.name);
      bySub.set(key, [...(bySub.get(key) ?? []), { category: normalize(category.name), symbol: makeSymbol(category.name, sub.name) }]);
    }
  }
  const allowUnmapped = options.allowUnmapped ?? true;
  const symbols: string[] = [];
  const coercedUnknown: string[] = [];
  for (const [index, item] of items.entries()) {
    const key = normalize(item.symbol);
    if (key === UNMAPPED && allowUnmapped) {
      symbols.push(UNMAPPED);
      continue;
    }
    const matches = bySub.get(key) ?? [];
    // A subcategory name used under two categories is told apart by the item's category.
    const match = matches.length === 1 ? matches[0] : matches.find((m) => item.category !== null && m.category === normalize(item.category));
    if (match) {
      symbols.push(match.symbol);
      continue;
    }
    if (options.unknownLabel === 'unmapped' && allowUnmapped) {
      symbols.push(UNMAPPED);
      coercedUnknown.push(item.symbol);
      continue;
    }
    return { ok: false, reason: 'unknown_label', detail: `item ${index + 1}: symbol "${item.symbol}" is not a subcategory of the ontology` };
  }
  return { ok: true, symbols, unmappedCount: symbols.filter((s) => s === UNMAPPED).length, coercedUnknown };
}
