import { z } from 'zod';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import { parseInput } from './zod-input.js';
import { parseStructuredText, readBuiltinDataFile, readStructuredFile, type StructuredFormat } from './data-files.js';

/** The symbol for a step no definition fits (docs/decisions.md#d6: its own symbol, its rate reported). */
export const UNMAPPED = 'unmapped';

const name = z
  .string()
  .trim()
  .min(1, 'must be a non-empty name')
  .refine((value) => !value.includes('/'), 'must not contain "/" (symbols are Category/Subcategory)')
  .refine((value) => value.toLowerCase() !== UNMAPPED, `"${UNMAPPED}" is reserved`);
const definition = z.string().trim().min(1, 'must be a non-empty definition');

const ontologySchema = z.object({
  name: z.string().trim().min(1).default('custom'),
  version: z.string().trim().min(1).default('unversioned'),
  description: z.string().default(''),
  categories: z
    .array(
      z.object({
        name,
        definition,
        inclusionCues: z.array(z.string().trim().min(1)).default([]),
        triggerVerbs: z.array(z.string().trim().min(1)).default([]),
        exclusions: z.array(z.string().trim().min(1)).default([]),
        subcategories: z.array(z.object({ name, definition })).min(1, 'needs at least one subcategory'),
      }),
    )
    .min(1, 'needs at least one category'),
});

/** A validated ontology: categories with their definitions, cues and subcategories. */
export type Ontology = z.output<typeof ontologySchema>;

/** The reference repository's layout: { "<root>": { description, children: [{ name, description }] } }. */
const referenceSchema = z.record(
  z.string(),
  z.object({
    description: definition,
    children: z.array(z.object({ name, description: definition })).min(1),
  }),
);

/** Names are unique ignoring case: the first repeat (a category's, then its subcategories') is the error. */
function checkUnique(ontology: Ontology, file: string): void {
  const categories = ontology.categories.map((category) => category.name.toLowerCase());
  ontology.categories.forEach((category, ci) => {
    if (categories.indexOf(categories[ci] as string) < ci) {
      throw new InputError(`duplicate category name "${category.name}"`, { file, field: `categories.${ci}.name` });
    }
    const subs = category.subcategories.map((sub) => sub.name.toLowerCase());
    const si = subs.findIndex((sub, i) => subs.indexOf(sub) < i);
    if (si >= 0) {
      const field = `categories.${ci}.subcategories.${si}.name`;
      throw new InputError(`duplicate subcategory name "${category.subcategories[si]?.name}" in "${category.name}"`, { file, field });
    }
  });
}

/** Validates an already-parsed ontology value (echolens layout or the reference layout). */
export function validateOntology(value: unknown, file = '<ontology>'): Ontology {
  const where = { file, fallback: 'invalid ontology' };
  let ontology: Ontology;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !('categories' in value)) {
    const converted = Object.entries(parseInput(referenceSchema, value, where)).map(([root, entry]) => ({
      name: root,
      definition: entry.description,
      subcategories: entry.children.map((child) => ({ name: child.name, definition: child.description })),
    }));
    ontology = parseInput(ontologySchema, { name: 'reference-layout', categories: converted }, where);
  } else {
    ontology = parseInput(ontologySchema, value, where);
  }
  checkUnique(ontology, file);
  return ontology;
}

/** Parses an ontology from JSON or YAML text. */
export function parseOntology(text: string, file = '<ontology>', format: StructuredFormat = 'json'): Ontology {
  return validateOntology(parseStructuredText(text, file, format), file);
}

export function loadOntologyFile(path: string): Ontology {
  return validateOntology(
    readStructuredFile(path, (extension) => `unsupported ontology file type "${extension}" (use .json or .yaml)`),
    path,
  );
}

/** The built-in ontology (`default`) or its semantically equivalent rewording (`alt`, App. C.3). */
export function loadBuiltinOntology(variant: 'default' | 'alt' = 'default'): Ontology {
  const data = readBuiltinDataFile(variant === 'alt' ? 'ontologyAlt' : 'ontology');
  return parseOntology(data.text, data.file, 'json');
}

export function makeSymbol(category: string, subcategory: string): string {
  return `${category}/${subcategory}`;
}

/** Every `Category/Subcategory` symbol of the ontology, in definition order (without `unmapped`). */
export function ontologySymbols(ontology: Ontology): string[] {
  return ontology.categories.flatMap((category) => category.subcategories.map((sub) => makeSymbol(category.name, sub.name)));
}

/** Splits a symbol into its category and subcategory; `unmapped` has neither. */
export function parseSymbol(symbol: string): { category: string; subcategory: string } | null {
  if (symbol === UNMAPPED) return null;
  const slash = symbol.indexOf('/');
  if (slash <= 0 || slash === symbol.length - 1) throw new InvalidArgumentError('symbol', `"${symbol}" is not Category/Subcategory`);
  return { category: symbol.slice(0, slash), subcategory: symbol.slice(slash + 1) };
}

/** Plain-text rendering of the definitions for a labeler prompt (clean text, not the reference's lossy repr). */
export function renderOntology(ontology: Ontology): string {
  const blocks = ontology.categories.map((category) => {
    const lines = [`## ${category.name}`, category.definition];
    if (category.inclusionCues.length > 0) lines.push(`Include when: ${category.inclusionCues.join('; ')}.`);
    if (category.triggerVerbs.length > 0) lines.push(`Trigger verbs and modals: ${category.triggerVerbs.join(', ')}.`);
    if (category.exclusions.length > 0) lines.push(`Exclude: ${category.exclusions.join('; ')}.`);
    lines.push('Subcategories:');
    for (const sub of category.subcategories) lines.push(`- ${makeSymbol(category.name, sub.name)}: ${sub.definition}`);
    return lines.join('\n');
  });
  return blocks.join('\n\n');
}
