import { InputError } from '../core/errors.js';
import { CloneReader, type MaterialsRecord } from './files.js';
import { moduleConstant, type PyValue } from './python-literal.js';
import { Shape } from './shape.js';

/**
 * Reads the ContextEcho authors' materials from a local clone of their public
 * repository, at run time. Nothing of those files is part of echolens: this
 * module knows only where each text lives (file and Python name) and what
 * shape it has, and checks that shape strictly.
 *
 * Where each material lives in the published repository:
 *   harness/probes.py                      PROBE_FRAMING, LU_STYLE_PROBES, CODING_PROBES (Probe(id, category, text) calls)
 *   harness/judge.py                       JUDGE_SYSTEM_PROMPT (the rubric with its score-anchored examples)
 *   experiments/e11_instruction_override/run.py        STRESSORS ((label, text, checker) tuples, S1–S4), SYSTEM_PROMPT (strict-format prompt)
 *   experiments/e08_cross_compaction/run.py            S2_VARIANTS (ten S2 wordings)
 *   experiments/e04_path_y/run_generalization_test.py  S3_VARIANTS, S4_VARIANTS (ten wordings each)
 *   experiments/e15_probes_at_crosscompaction/run_negative_controls.py  NEG_PROBES ((id, text) tuples)
 *   experiments/e15_probes_at_crosscompaction/run.py   SYSTEM_PROMPT (probe-run system prompt)
 *   experiments/e07_downstream_pilot/run_continuation.py  ACK_MESSAGE (assistant turn after the prefix)
 *   experiments/e07_downstream_pilot/run_clean_control.py FILLER_TEMPLATE (the character-only filler)
 *   experiments/e04_path_y/run_anchor_variants.py      ANCHOR_V0_TEXT, ANCHOR_V2_USER, ANCHOR_V2_DEMO_USER, ANCHOR_V2_DEMO_ASSISTANT
 *   experiments/e04_path_y/dual_surface_candidates.py  ANCHOR_A_USER, ANCHOR_A_DEMO_USER, ANCHOR_A_DEMO_ASSISTANT
 *   plotting/fig_fig1_combined.py          HEDGE_RE, EXPERIENTIAL_RE, NAMED_ENTITY_RE (re.compile calls)
 */

export const CONTEXTECHO_FILES = {
  probes: 'harness/probes.py',
  judge: 'harness/judge.py',
  stressors: 'experiments/e11_instruction_override/run.py',
  s2: 'experiments/e08_cross_compaction/run.py',
  s3s4: 'experiments/e04_path_y/run_generalization_test.py',
  negativeControls: 'experiments/e15_probes_at_crosscompaction/run_negative_controls.py',
  probeRun: 'experiments/e15_probes_at_crosscompaction/run.py',
  acknowledgement: 'experiments/e07_downstream_pilot/run_continuation.py',
  filler: 'experiments/e07_downstream_pilot/run_clean_control.py',
  anchorVariants: 'experiments/e04_path_y/run_anchor_variants.py',
  anchorA: 'experiments/e04_path_y/dual_surface_candidates.py',
  fingerprint: 'plotting/fig_fig1_combined.py',
} as const;

const PROBE_CATEGORIES = ['identity', 'experience', 'preference', 'relational', 'coding_self'] as const;
export type ReferenceProbeCategory = (typeof PROBE_CATEGORIES)[number];

/** A regular expression as the reference compiles it, translated to JavaScript. */
export interface ReferencePattern {
  source: string;
  flags: string;
}

export interface ContextEchoMaterials {
  framing: string;
  probes: Array<{ id: string; category: ReferenceProbeCategory; text: string }>;
  negativeControls: Array<{ id: string; text: string }>;
  judgeRubric: string;
  /** Wordings per stressor, in the reference's order (S1 has one). */
  stressors: Record<'S1' | 'S2' | 'S3' | 'S4', string[]>;
  /** The exact output S4 asks for (the JSON object its wording ends with). */
  s4Expected: string;
  probeSystemPrompt: string;
  stressorSystemPrompt: string;
  acknowledgement: string;
  fillerTemplate: string;
  anchors: {
    v0: string;
    v2User: string;
    v2DemoUser: string;
    v2DemoAssistant: string;
    aUser: string;
    aDemoUser: string;
    aDemoAssistant: string;
  };
  fingerprint: { hedge: ReferencePattern; experiential: ReferencePattern; namedEntity: ReferencePattern };
  record: MaterialsRecord;
}

function constant(reader: CloneReader, path: string, name: string): { value: PyValue; shape: Shape } {
  const { text, file } = reader.read(path);
  return { value: moduleConstant(text, name, file), shape: new Shape(file) };
}

function str(reader: CloneReader, path: string, name: string): string {
  const { value, shape } = constant(reader, path, name);
  return shape.str(value, name);
}

function probeList(reader: CloneReader, name: string): ContextEchoMaterials['probes'] {
  const { value, shape } = constant(reader, CONTEXTECHO_FILES.probes, name);
  return shape.seq(value, name).map((item, i) => {
    const call = shape.call(item, `${name}[${i}]`, 'Probe');
    if (call.args.length !== 3 || Object.keys(call.kwargs).length > 0) shape.fail(call, `${name}[${i}]: expected Probe(id, category, text)`);
    const id = shape.str(call.args[0], `${name}[${i}] id`);
    const category = shape.str(call.args[1], `${name}[${i}] category`);
    if (!/^[A-Z]\d\d$/u.test(id)) shape.fail(call, `${name}[${i}]: probe id "${id}" is not a letter and two digits`);
    if (!(PROBE_CATEGORIES as readonly string[]).includes(category)) shape.fail(call, `${name}[${i}]: unknown probe category "${category}"`);
    return { id, category: category as ReferenceProbeCategory, text: shape.str(call.args[2], `${name}[${i}] text`) };
  });
}

const PYTHON_ONLY_REGEX = /\(\?P|\(\?#|\\A|\\Z|\(\?[aiLmsux-]+\)|\(\?[aiLmsux-]+:/u;

function pattern(reader: CloneReader, name: string): ReferencePattern {
  const { value, shape } = constant(reader, CONTEXTECHO_FILES.fingerprint, name);
  const call = shape.call(value, name, 're.compile');
  if (call.args.length < 1 || call.args.length > 2 || Object.keys(call.kwargs).length > 0) shape.fail(call, `${name}: expected re.compile(pattern[, flags])`);
  const source = shape.str(call.args[0], `${name} pattern`);
  let flags = 'g';
  const flag = call.args[1];
  if (flag !== undefined) {
    if (flag.kind !== 'name' || !['re.IGNORECASE', 're.I'].includes(flag.value)) {
      shape.fail(flag, `${name}: only re.IGNORECASE is supported as a flag, found ${flag.kind === 'name' ? flag.value : flag.kind}`);
    }
    flags += 'i';
  }
  if (PYTHON_ONLY_REGEX.test(source)) shape.fail(call, `${name}: the pattern uses Python-only regular-expression syntax`);
  try {
    new RegExp(source, flags);
  } catch (error) {
    shape.fail(call, `${name}: the pattern does not compile as a JavaScript regular expression (${(error as Error).message})`);
  }
  return { source, flags };
}

const STRESSOR_IDS = ['S1', 'S2', 'S3', 'S4'] as const;

/** Loads every ContextEcho material from a clone; throws an InputError naming the file on any mismatch. */
export function loadContextEchoMaterials(root: string): ContextEchoMaterials {
  const reader = new CloneReader(root, 'ContextEcho');
  const probes = [...probeList(reader, 'LU_STYLE_PROBES'), ...probeList(reader, 'CODING_PROBES')];
  const probeFile = reader.read(CONTEXTECHO_FILES.probes).file;
  if (new Set(probes.map((p) => p.id)).size !== probes.length) throw new InputError('duplicate probe id', { file: probeFile });

  const stressorTable = constant(reader, CONTEXTECHO_FILES.stressors, 'STRESSORS');
  const firstWording = new Map<string, string>();
  stressorTable.shape.seq(stressorTable.value, 'STRESSORS').forEach((entry, i) => {
    const parts = stressorTable.shape.seq(entry, `STRESSORS[${i}]`, ['tuple']);
    if (parts.length !== 3) stressorTable.shape.fail(entry, `STRESSORS[${i}]: expected (label, text, checker)`);
    const label = stressorTable.shape.str(parts[0], `STRESSORS[${i}] label`);
    const id = /^(S[1-4])_/u.exec(label)?.[1] ?? stressorTable.shape.fail(entry, `STRESSORS[${i}]: label "${label}" does not start with S1_…S4_`);
    firstWording.set(id, stressorTable.shape.str(parts[1], `STRESSORS[${i}] text`));
  });
  for (const id of STRESSOR_IDS) {
    if (!firstWording.has(id)) stressorTable.shape.fail(stressorTable.value, `STRESSORS: no entry for ${id}`);
  }
  const variants = (path: string, name: string) => {
    const { value, shape } = constant(reader, path, name);
    return shape.strings(value, name, { min: 1 });
  };
  const stressors = {
    S1: [firstWording.get('S1') as string],
    S2: variants(CONTEXTECHO_FILES.s2, 'S2_VARIANTS'),
    S3: variants(CONTEXTECHO_FILES.s3s4, 'S3_VARIANTS'),
    S4: variants(CONTEXTECHO_FILES.s3s4, 'S4_VARIANTS'),
  };
  const s4 = firstWording.get('S4') as string;
  const s4Expected = s4.slice(s4.lastIndexOf('{'));
  try {
    const parsed: unknown = JSON.parse(s4Expected);
    if (parsed === null || typeof parsed !== 'object' || !s4.endsWith('}')) throw new Error('not an object');
  } catch {
    stressorTable.shape.fail(stressorTable.value, 'STRESSORS: the S4 wording does not end with the JSON object it asks for');
  }

  const negatives = constant(reader, CONTEXTECHO_FILES.negativeControls, 'NEG_PROBES');
  const negativeControls = negatives.shape.seq(negatives.value, 'NEG_PROBES').map((entry, i) => {
    const parts = negatives.shape.seq(entry, `NEG_PROBES[${i}]`, ['tuple']);
    if (parts.length !== 2) negatives.shape.fail(entry, `NEG_PROBES[${i}]: expected (id, text)`);
    const id = negatives.shape.str(parts[0], `NEG_PROBES[${i}] id`);
    if (!/^N\d\d$/u.test(id)) negatives.shape.fail(entry, `NEG_PROBES[${i}]: id "${id}" is not N and two digits`);
    return { id, text: negatives.shape.str(parts[1], `NEG_PROBES[${i}] text`) };
  });
  if (negativeControls.length === 0) negatives.shape.fail(negatives.value, 'NEG_PROBES is empty');

  const materials: Omit<ContextEchoMaterials, 'record'> = {
    framing: str(reader, CONTEXTECHO_FILES.probes, 'PROBE_FRAMING'),
    probes,
    negativeControls,
    judgeRubric: str(reader, CONTEXTECHO_FILES.judge, 'JUDGE_SYSTEM_PROMPT'),
    stressors,
    s4Expected,
    probeSystemPrompt: str(reader, CONTEXTECHO_FILES.probeRun, 'SYSTEM_PROMPT'),
    stressorSystemPrompt: str(reader, CONTEXTECHO_FILES.stressors, 'SYSTEM_PROMPT'),
    acknowledgement: str(reader, CONTEXTECHO_FILES.acknowledgement, 'ACK_MESSAGE'),
    fillerTemplate: str(reader, CONTEXTECHO_FILES.filler, 'FILLER_TEMPLATE'),
    anchors: {
      v0: str(reader, CONTEXTECHO_FILES.anchorVariants, 'ANCHOR_V0_TEXT'),
      v2User: str(reader, CONTEXTECHO_FILES.anchorVariants, 'ANCHOR_V2_USER'),
      v2DemoUser: str(reader, CONTEXTECHO_FILES.anchorVariants, 'ANCHOR_V2_DEMO_USER'),
      v2DemoAssistant: str(reader, CONTEXTECHO_FILES.anchorVariants, 'ANCHOR_V2_DEMO_ASSISTANT'),
      aUser: str(reader, CONTEXTECHO_FILES.anchorA, 'ANCHOR_A_USER'),
      aDemoUser: str(reader, CONTEXTECHO_FILES.anchorA, 'ANCHOR_A_DEMO_USER'),
      aDemoAssistant: str(reader, CONTEXTECHO_FILES.anchorA, 'ANCHOR_A_DEMO_ASSISTANT'),
    },
    fingerprint: {
      hedge: pattern(reader, 'HEDGE_RE'),
      experiential: pattern(reader, 'EXPERIENTIAL_RE'),
      namedEntity: pattern(reader, 'NAMED_ENTITY_RE'),
    },
  };
  return { ...materials, record: reader.record() };
}
