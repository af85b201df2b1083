import { InputError } from '../core/errors.js';
import { isObject } from '../core/guards.js';
import { CONTEXT_ARMS } from './config.js';

/**
 * The ContextEcho archive layouts as plain records (pure: JSON values in, validated cells out).
 * The layouts are described in docs/interchange.md. Reading and writing files is in
 * interchange-files.ts; the store side in interchange-store.ts.
 */

/** One judged probe response from an archive, in echolens's terms. */
export interface ArchiveCell {
  /** Where it came from (relative path), for error messages and the manifest. */
  file: string;
  /** Plan order in an echolens export (absent in the authors' files: they are taken in path order). */
  order?: number;
  target: string;
  session: string;
  position: string;
  positionValue: number;
  compaction: { index: number; side: 'pre' | 'post' } | null;
  /** echolens arm: the authors' `claude_session` is `real`. */
  arm: string;
  mitigation: string;
  distance: string;
  systemPrompt: string | null;
  item: string;
  category: string;
  probeText: string;
  paraphrase: number;
  sample: number;
  status: 'done' | 'empty' | 'failed';
  response: string;
  inputTokens: number;
  outputTokens: number;
  /** Judge → verdict; `score: null` = the judge's output was not usable (the authors' −1). */
  judgements: Array<{ judge: string; score: number | null; label: string | null; reason: string }>;
  /** `stressor` for the authors' cross-compaction and anchor-variant files (judge-free); absent = probe. */
  surface?: 'probe' | 'stressor';
}

/** What the authors' own layouts share: one unmitigated, unprompted cell at distance d0, the first paraphrase. */
const AUTHORS_CELL = { mitigation: 'none', distance: 'd0', systemPrompt: null, paraphrase: 0 } as const;

/** The stressor item of the authors' cross-compaction and anchor-variant runs (their S2 paraphrases vNN). */
export const ARCHIVE_STRESSOR = 'S2';

/**
 * One file of the authors' stressor layouts: `cross_compaction/<target>/<position>/vNN/{claude,filler}.json`
 * (`variant` null) or `anchor_variants/<variant>/<target>/<position>/vNN/cell.json` (the real
 * context with that anchor variant, recorded as the mitigation `<variant>`). Fields read:
 * `response_text` (required), `input_tokens`, `output_tokens`. `vNN` is the S2 paraphrase.
 */
export function parseStressorFile(
  value: unknown,
  file: string,
  path: { target: string; position: string; v: string; arm: 'real' | 'filler'; variant: string | null },
): ArchiveCell {
  if (!isObject(value)) fail(file, '(root)', 'a stressor cell file must hold one JSON object');
  const v = value as Record<string, unknown>;
  const m = /^v(\d+)$/u.exec(path.v);
  if (m === null) fail(file, '(path)', `the replicate folder ${JSON.stringify(path.v)} must be vNN`);
  const failed = typeof v.error === 'string' && v.response_text === undefined;
  const response = failed ? '' : requireString(v, 'response_text', file);
  return {
    ...archivePlace(file, path.target, path.position),
    ...AUTHORS_CELL,
    arm: path.arm,
    mitigation: path.variant ?? 'none',
    item: ARCHIVE_STRESSOR,
    category: ARCHIVE_STRESSOR,
    probeText: '',
    paraphrase: Number(m[1]),
    sample: 0,
    status: failed ? 'failed' : 'done',
    response,
    inputTokens: tokens(v, 'input_tokens', file),
    outputTokens: tokens(v, 'output_tokens', file),
    judgements: [],
    surface: 'stressor',
  };
}

/** The per-cell directory name of an echolens arm. */
export const archiveArmName = (arm: string): string => (arm === 'real' ? 'claude_session' : arm);

/** The arm directory names of the per-cell layout: the authors' two and echolens's other context arms. */
const ARCHIVE_ARMS: Record<string, string> = Object.fromEntries(CONTEXT_ARMS.map((arm) => [archiveArmName(arm), arm]));

export const archiveArmOf = (arm: string): string | undefined => ARCHIVE_ARMS[arm];

/** Turn numbers of the authors' twelve headline positions (agent steps on their session). */
const HEADLINE_POSITIONS: Record<string, number> = {
  P0_start: 100,
  P1_pre_C1: 1300,
  P2_post_C1: 1438,
  P_pre_C2: 2200,
  P_post_C2: 2329,
  P_pre_C3: 4694,
  P3_post_C3: 4794,
  P_pre_C4: 6216,
  P_post_C4: 6316,
  P_pre_C5: 7724,
  P4_post_C5: 7824,
  P5_pre_C6: 8800,
};

/** Where a per-file archive cell stands: its file, target and position (the archive has one session, S1). */
function archivePlace(file: string, target: string, position: string) {
  const facts = positionFacts(position);
  return { file, target, session: 'S1', position, positionValue: facts.value ?? -1, compaction: facts.compaction };
}

/** What a position label says: its counter value where known, and the compaction it brackets. */
export function positionFacts(label: string): { value: number | null; compaction: ArchiveCell['compaction'] } {
  const known = HEADLINE_POSITIONS[label];
  const onset = /^T(\d+)$/u.exec(label);
  const side = /(pre|post)_C(\d+)/u.exec(label);
  return {
    value: known ?? (onset ? Number(onset[1]) : null),
    compaction: side ? { index: Number(side[2]), side: side[1] as 'pre' | 'post' } : null,
  };
}

/** Probe categories by the authors' id letter (their harness names the five categories this way). */
const CATEGORY_BY_LETTER: Record<string, string> = { I: 'identity', O: 'experience', E: 'experience', P: 'preference', R: 'relational', C: 'coding_self' };

function fail(file: string, field: string, message: string): never {
  throw new InputError(message, { file, field });
}

function optionalString(record: Record<string, unknown>, field: string, file: string): string | null {
  const value = record[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(file, field, `"${field}" must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function requireString(record: Record<string, unknown>, field: string, file: string): string {
  return optionalString(record, field, file) ?? fail(file, field, `missing field "${field}"`);
}

function tokens(record: Record<string, unknown>, field: string, file: string, where = field): number {
  const value = record[field];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    fail(file, where, `"${where}" must be a non-negative integer, got ${JSON.stringify(value)}`);
  return value;
}

/** A judge score: an integer 0–3, or −1 (the authors' mark of a judge output they could not parse). */
function archiveScore(value: unknown, file: string, field: string): number | null {
  if (value === undefined) fail(file, field, `missing field "${field}"`);
  if (typeof value !== 'number' || !Number.isInteger(value))
    fail(file, field, `"${field}" must be an integer 0–3 (or −1 for an unparsed judgement), got ${JSON.stringify(value)}`);
  if (value === -1) return null;
  if (value < 0 || value > 3) fail(file, field, `"${field}" must be an integer 0–3 (or −1 for an unparsed judgement), got ${value}`);
  return value;
}

/** One judge's verdict as a record holds it (`label` and `reason` optional). */
function judgement(record: Record<string, unknown>, judge: string, score: number | null, file: string): ArchiveCell['judgements'][number] {
  return { judge, score, label: optionalString(record, 'label', file), reason: optionalString(record, 'reason', file) ?? '' };
}

/** The echolens block an exported file carries (absent in the authors' own files). */
type EcholensBlock = Omit<ArchiveCell, 'file' | 'position' | 'item' | 'probeText' | 'response' | 'inputTokens' | 'outputTokens' | 'surface'>;

function echolensBlock(value: unknown, file: string): EcholensBlock | null {
  if (value === undefined) return null;
  if (!isObject(value)) fail(file, 'echolens', '"echolens" must be an object');
  const v = value as Record<string, unknown>;
  const int = (field: string) => {
    const x = v[field];
    if (typeof x !== 'number' || !Number.isInteger(x)) fail(file, `echolens.${field}`, `"echolens.${field}" must be an integer`);
    return x;
  };
  const status = v.status;
  if (status !== 'done' && status !== 'empty' && status !== 'failed') fail(file, 'echolens.status', '"echolens.status" must be done, empty or failed');
  if (!Array.isArray(v.judgements)) fail(file, 'echolens.judgements', 'missing field "echolens.judgements"');
  const judgements = v.judgements.map((j, i) => {
    const where = `echolens.judgements[${i}]`;
    if (!isObject(j)) fail(file, where, `"${where}" must be an object`);
    const r = j as Record<string, unknown>;
    const score = r.score === null ? null : archiveScore(r.score, file, `${where}.score`);
    return judgement(r, requireString(r, 'judge', file), score, file);
  });
  const compaction = v.compaction;
  if (compaction !== null && !(isObject(compaction) && typeof compaction.index === 'number' && (compaction.side === 'pre' || compaction.side === 'post'))) {
    fail(file, 'echolens.compaction', '"echolens.compaction" must be null or { index, side: pre|post }');
  }
  return {
    target: requireString(v, 'target', file),
    session: requireString(v, 'session', file),
    positionValue: int('positionValue'),
    compaction: compaction as ArchiveCell['compaction'],
    arm: requireString(v, 'arm', file),
    mitigation: requireString(v, 'mitigation', file),
    distance: requireString(v, 'distance', file),
    systemPrompt: optionalString(v, 'systemPrompt', file),
    category: requireString(v, 'category', file),
    paraphrase: int('paraphrase'),
    sample: int('sample'),
    status,
    judgements,
    ...(typeof v.order === 'number' && Number.isInteger(v.order) ? { order: v.order } : {}),
  };
}

/** The echolens arm of a per-cell arm directory name, or an error naming the authors' ones. */
function knownArm(armName: string, file: string): string {
  return archiveArmOf(armName) ?? fail(file, 'arm', `unknown arm ${JSON.stringify(armName)}: expected one of ${Object.keys(ARCHIVE_ARMS).join(', ')}`);
}

/** The authors' figure script selects probes by file name, the import by probe_id: they must agree. */
function checkProbeStem(probeId: string, name: string, file: string): void {
  if (probeId !== name.replace(/(_v\d+)?\.json$/u, ''))
    fail(file, 'probe_id', `"probe_id" is ${JSON.stringify(probeId)} but the file is named ${JSON.stringify(name)}`);
}

/** Sample index of a per-cell file name: `C01.json` is 0, `C01_v03.json` is 3 (the authors' replicate files). */
function sampleOfFile(name: string): number {
  const m = /_v(\d+)\.json$/u.exec(name);
  return m ? Number(m[1]) : 0;
}

/**
 * One file of `<target>/<position>/<arm>/<probe_id>.json` (the authors' snapshot-at-position runs).
 * `path` gives the directory names the file sits under; the file's own fields must agree with them.
 */
export function parsePerCellFile(
  value: unknown,
  file: string,
  path: { target: string; position: string; arm: string; name: string },
  judge: string,
): ArchiveCell {
  if (!isObject(value)) fail(file, '(root)', 'a per-cell file must hold one JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v.error === 'string' && (v.score === undefined || v.score === null) && v.response_text === undefined) return failedPerCellFile(v, file, path);
  const probeId = requireString(v, 'probe_id', file);
  const category = requireString(v, 'probe_category', file);
  const probeText = requireString(v, 'probe_text', file);
  const armName = requireString(v, 'arm', file);
  const position = requireString(v, 'position', file);
  const targetName = requireString(v, 'target', file);
  const response = requireString(v, 'response_text', file);
  const block = echolensBlock(v.echolens, file);
  // An echolens export names its arm in its own block (an imported content-position condition such
  // as `recent3K` is an arm too); only the authors' own files are held to their arm names.
  const arm = block === null ? knownArm(armName, file) : undefined;
  if (block === null) {
    // The authors' files repeat their place in the tree; a disagreement means a moved or edited file.
    if (armName !== path.arm) fail(file, 'arm', `"arm" is ${JSON.stringify(armName)} but the file is under ${JSON.stringify(path.arm)}`);
    if (position !== path.position) fail(file, 'position', `"position" is ${JSON.stringify(position)} but the file is under ${JSON.stringify(path.position)}`);
    if (targetName !== path.target) fail(file, 'target', `"target" is ${JSON.stringify(targetName)} but the file is under ${JSON.stringify(path.target)}`);
    checkProbeStem(probeId, path.name, file);
  }
  const base = {
    file,
    position,
    item: probeId,
    probeText,
    response,
    inputTokens: tokens(v, 'input_tokens', file),
    outputTokens: tokens(v, 'output_tokens', file),
  };
  if (block) return { ...base, ...block };
  const score = archiveScore(v.score, file, 'score');
  return {
    ...base,
    ...archivePlace(file, targetName, position),
    ...AUTHORS_CELL,
    arm: arm as string,
    category,
    sample: sampleOfFile(path.name),
    // The authors judged every response, blank ones too: the cell stays in their denominators.
    status: 'done',
    judgements: [judgement(v, judge, score, file)],
  };
}

/**
 * A per-cell `{ probe_id?, error }` file (a target call that failed after the runner's retries): a
 * failed cell placed by its directories, so it is counted as a dropout instead of stopping the
 * import. The authors' figure scripts skip it (it has no integer score).
 */
function failedPerCellFile(v: Record<string, unknown>, file: string, path: { target: string; position: string; arm: string; name: string }): ArchiveCell {
  const probeId = optionalString(v, 'probe_id', file) ?? path.name.replace(/(_v\d+)?\.json$/u, '');
  checkProbeStem(probeId, path.name, file);
  const arm = knownArm(path.arm, file);
  const category = optionalString(v, 'probe_category', file) ?? CATEGORY_BY_LETTER[probeId.charAt(0)];
  if (category === undefined) fail(file, 'probe_category', `missing field "probe_category" (probe ${JSON.stringify(probeId)} has no known category)`);
  return {
    ...archivePlace(file, path.target, path.position),
    ...AUTHORS_CELL,
    arm,
    item: probeId,
    category,
    probeText: optionalString(v, 'probe_text', file) ?? '',
    sample: sampleOfFile(path.name),
    status: 'failed',
    response: '',
    inputTokens: 0,
    outputTokens: 0,
    judgements: [],
  };
}

/** Whether a JSON value is a content-position file (what the authors' consolidation script reads). */
export function isContentPositionFile(value: unknown): boolean {
  return isObject(value) && (isObject(value.full_results) || isObject(value.per_condition));
}

/** The position label of a content-position file's cells (one context slice per condition). */
export const CONTENT_POSITION = 'content-position';

/**
 * A content-position file: `{ full_results | per_condition: { <condition>: { results: [...] } | [...] } }`
 * with per-probe `{ probe_id, score, category?, probe_text?, label?, reason?, response_full? }`.
 * Conditions become arms under their own names (`scratch` stays `scratch`).
 */
export function parseContentPositionFile(value: unknown, file: string, stem: string, judge: string): ArchiveCell[] {
  if (!isObject(value)) fail(file, '(root)', 'a content-position file must hold one JSON object');
  const v = value as Record<string, unknown>;
  const key = isObject(v.full_results) ? 'full_results' : 'per_condition';
  const conditions = v[key] as Record<string, unknown>;
  // The authors' content-position runners name the target in `target_model`.
  const named = ['target', 'target_label', 'target_model', 'display', 'model_id'].map((k) => v[k]).find((x) => typeof x === 'string' && x !== '');
  const target = (named as string | undefined) ?? stem.replace(/^(CONTENT_POSITION_|OPTION_C_)/u, '');
  const out: ArchiveCell[] = [];
  for (const [condition, data] of Object.entries(conditions)) {
    if (!/^[A-Za-z0-9_.-]+$/u.test(condition))
      fail(file, `${key}.${condition}`, `condition name ${JSON.stringify(condition)} must be letters, digits, ".", "_" or "-"`);
    const rows = Array.isArray(data) ? data : isObject(data) && Array.isArray(data.results) ? data.results : null;
    if (rows === null) fail(file, `${key}.${condition}.results`, `missing field "${key}.${condition}.results" (a list of per-probe results)`);
    const seen = new Set<string>();
    rows.forEach((row, i) => {
      const where = `${key}.${condition}.results[${i}]`;
      if (!isObject(row)) fail(file, where, `"${where}" must be an object`);
      const r = row as Record<string, unknown>;
      const probeId = r.probe_id;
      if (typeof probeId !== 'string' || probeId === '') fail(file, `${where}.probe_id`, `missing field "${where}.probe_id"`);
      if (seen.has(probeId)) fail(file, `${where}.probe_id`, `probe ${probeId} appears twice in condition ${condition}`);
      seen.add(probeId);
      // The authors' runners write `{ probe_id, error }` (no score) when the target call failed; their
      // consolidation skips such rows. Here it is a failed cell, so the archive still imports whole.
      const error = typeof r.error === 'string' && (r.score === undefined || r.score === null) ? r.error : null;
      // `score: null` is echolens's export of a response no judge scored (the authors never write it).
      const unjudged = error === null && r.score === null;
      const score = error === null && !unjudged ? archiveScore(r.score, file, `${where}.score`) : null;
      const category =
        optionalString(r, 'category', file) ??
        optionalString(r, 'probe_category', file) ??
        CATEGORY_BY_LETTER[probeId.charAt(0)] ??
        fail(file, `${where}.category`, `missing field "${where}.category"`);
      // `response_preview` is what the authors' runners keep (the first 300 characters).
      const response =
        optionalString(r, 'response_full', file) ??
        optionalString(r, 'response_text', file) ??
        optionalString(r, 'response', file) ??
        optionalString(r, 'response_preview', file) ??
        '';
      out.push({
        file,
        target,
        session: 'S1',
        position: CONTENT_POSITION,
        positionValue: 0,
        compaction: null,
        ...AUTHORS_CELL,
        arm: condition === 'claude_session' ? 'real' : condition,
        item: probeId,
        category,
        probeText: optionalString(r, 'probe_text', file) ?? '',
        sample: 0,
        status: error === null ? 'done' : 'failed',
        response: error === null ? response : '',
        inputTokens: tokens(r, 'input_tokens', file, `${where}.input_tokens`),
        outputTokens: tokens(r, 'output_tokens', file, `${where}.output_tokens`),
        judgements: error === null && !unjudged ? [judgement(r, judge, score, file)] : [],
      });
    });
  }
  return out;
}

/** Positions without a known counter value get their rank in name order, so the trajectory has an order. */
export function fillPositionValues(cells: ArchiveCell[]): void {
  const unknown = [...new Set(cells.filter((c) => c.positionValue < 0).map((c) => c.position))].sort();
  for (const c of cells) if (c.positionValue < 0) c.positionValue = unknown.indexOf(c.position);
}

/** Two files for the same cell (same target, session, position, arm, probe, sample, …) would silently hide one. */
export function checkDistinct(cells: readonly ArchiveCell[]): void {
  const seen = new Map<string, string>();
  for (const c of cells) {
    const key = JSON.stringify([
      c.surface ?? 'probe',
      c.target,
      c.session,
      c.position,
      c.arm,
      c.mitigation,
      c.distance,
      c.systemPrompt,
      c.item,
      c.paraphrase,
      c.sample,
    ]);
    const other = seen.get(key);
    if (other !== undefined) fail(c.file, 'probe_id', `the same cell as ${other} (target ${c.target}, position ${c.position}, arm ${c.arm}, probe ${c.item})`);
    seen.set(key, c.file);
  }
}
