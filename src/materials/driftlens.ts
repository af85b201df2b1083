import { InputError } from '../core/errors.js';
import { CloneReader, type MaterialsRecord } from './files.js';
import { formatTemplateParts, functionReturn, moduleConstant, type StringPart } from './python-literal.js';
import { Shape } from './shape.js';

/**
 * Reads the DriftLens authors' materials from a local clone of their public
 * repository, at run time (nothing of those files is part of echolens).
 *
 * Where each material lives in the published repository:
 *   data/ontology.json                      the ontology ({root: {description, children: [{name, description}]}})
 *   src/symbolic_drift/interventions.py     INTERVENTIONS (category → list of persona strings; no_intervention = [""])
 *   src/symbolic_drift/prompts.py           SYSTEM_PROMPT (generation system prompt),
 *                                           build_completeness_prompt (returns the step-format instruction, an f-string over `question`),
 *                                           _MAPPING_TEMPLATE (the labeler prompt, a str.format template over `ontology` and `reasoning`)
 */

export const DRIFTLENS_FILES = {
  ontology: 'data/ontology.json',
  interventions: 'src/symbolic_drift/interventions.py',
  prompts: 'src/symbolic_drift/prompts.py',
} as const;

export const NO_INTERVENTION = 'no_intervention';
export const PERSONA_PREFIX = 'persona_';

export interface DriftLensMaterials {
  /** The ontology file's parsed JSON, key order kept (the labeler prompt renders it as the reference does). */
  ontologyJson: unknown;
  ontologyText: string;
  ontologyFile: string;
  /** Categories in file order; a string listed under several categories belongs to the last (as the reference's flatten() decides). */
  interventions: Array<{ category: string; strings: Array<{ index: number; text: string }> }>;
  systemPrompt: string;
  /** The generation instruction with one `question` field. */
  instruction: StringPart[];
  /** The labeler prompt with the fields `ontology` and `reasoning`. */
  mappingTemplate: StringPart[];
  record: MaterialsRecord;
}

export function loadDriftLensMaterials(root: string): DriftLensMaterials {
  const reader = new CloneReader(root, 'DriftLens');
  const ontology = reader.read(DRIFTLENS_FILES.ontology);
  let ontologyJson: unknown;
  try {
    ontologyJson = JSON.parse(ontology.text);
  } catch (error) {
    throw new InputError(`not valid JSON (${(error as Error).message})`, { file: ontology.file });
  }

  const interventionsFile = reader.read(DRIFTLENS_FILES.interventions);
  const shape = new Shape(interventionsFile.file);
  const table = shape.dict(moduleConstant(interventionsFile.text, 'INTERVENTIONS', interventionsFile.file), 'INTERVENTIONS');
  const owner = new Map<string, string>();
  const lists = table.map(([category, value]) => {
    if (category !== NO_INTERVENTION && !category.startsWith(PERSONA_PREFIX)) {
      shape.fail(value, `INTERVENTIONS: category "${category}" is neither ${NO_INTERVENTION} nor ${PERSONA_PREFIX}…`);
    }
    const strings = shape
      .seq(value, `INTERVENTIONS["${category}"]`)
      .map((item, i) => shape.str(item, `INTERVENTIONS["${category}"][${i}]`, { nonEmpty: category !== NO_INTERVENTION }));
    if (category === NO_INTERVENTION && (strings.length !== 1 || strings[0] !== '')) {
      shape.fail(value, `INTERVENTIONS["${NO_INTERVENTION}"]: expected exactly the empty string`);
    }
    strings.forEach((text, i) => {
      if (/[\r\n]/u.test(text)) shape.fail(value, `INTERVENTIONS["${category}"][${i}]: a persona string must be one line`);
      owner.set(text, category);
    });
    return { category, strings };
  });
  if (!lists.some((l) => l.category === NO_INTERVENTION)) shape.fail(undefined, `INTERVENTIONS has no "${NO_INTERVENTION}" entry`);
  const notes: string[] = [];
  const interventions = lists.map(({ category, strings }) => {
    const kept = strings.map((text, index) => ({ index, text })).filter(({ text }) => owner.get(text) === category);
    const moved = strings.filter((text) => owner.get(text) !== category);
    if (moved.length > 0) {
      notes.push(`${category}: ${moved.length} string(s) also listed in a later category are counted there (the reference's flatten() does the same)`);
    }
    return { category, strings: kept };
  });
  const emptied = interventions.filter((i) => i.strings.length === 0).map((i) => i.category);
  if (emptied.length > 0) notes.push(`categories left without strings and skipped: ${emptied.join(', ')}`);

  const prompts = reader.read(DRIFTLENS_FILES.prompts);
  const promptShape = new Shape(prompts.file);
  const systemPrompt = promptShape.str(moduleConstant(prompts.text, 'SYSTEM_PROMPT', prompts.file), 'SYSTEM_PROMPT');
  const instruction = promptShape.template(functionReturn(prompts.text, 'build_completeness_prompt', prompts.file), 'build_completeness_prompt return value', [
    'question',
  ]);
  const mappingValue = moduleConstant(prompts.text, '_MAPPING_TEMPLATE', prompts.file);
  const mappingText = promptShape.str(mappingValue, '_MAPPING_TEMPLATE');
  const mappingTemplate = formatTemplateParts(mappingText, prompts.file, mappingValue.line);
  const fields = mappingTemplate.flatMap((p) => ('field' in p ? [p.field] : [])).sort();
  if (fields.join(',') !== 'ontology,reasoning') {
    promptShape.fail(mappingValue, `_MAPPING_TEMPLATE: expected the fields {ontology} and {reasoning} once each, found {${fields.join('}, {')}}`);
  }
  return {
    ontologyJson,
    ontologyText: ontology.text,
    ontologyFile: ontology.file,
    interventions: interventions.filter((i) => i.strings.length > 0),
    systemPrompt,
    instruction,
    mappingTemplate,
    record: reader.record(notes),
  };
}

/** Python's repr() of a JSON value (dicts keep key order), as `str(dict)` prints it. */
export function pythonRepr(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) && !Object.is(value, -0) && Math.abs(value) < 1e16 ? String(value) : pythonFloat(value);
  if (typeof value === 'string') return pythonStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pythonStringRepr(k)}: ${pythonRepr(v)}`)
      .join(', ')}}`;
  }
  throw new InputError(`cannot render a ${typeof value} as Python`, {});
}

/**
 * Python's repr() of a float: the shortest round-trip digits (JavaScript finds the same ones),
 * written in positional notation for decimal exponents from −4 to 15 and as `d.ddde±XX` outside.
 */
function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  const [mantissa = '0', exponent = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(exponent);
  if (exp < -4 || exp >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (exp >= digits.length - 1) return `${sign}${digits}${'0'.repeat(exp - digits.length + 1)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Characters Python's str.isprintable() rejects: categories C* and Z* except the ASCII space. */
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0) as number;
      out +=
        code < 0x100
          ? `\\x${code.toString(16).padStart(2, '0')}`
          : code < 0x10000
            ? `\\u${code.toString(16).padStart(4, '0')}`
            : `\\U${code.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

/** The ontology as the reference's labeler prompt shows it: Python's str() of the dict without quotes and braces. */
export function referenceOntologyText(ontologyJson: unknown): string {
  return pythonRepr(ontologyJson).replace(/'/gu, '').replace(/[{}]/gu, '');
}
