import { readFileSync } from 'node:fs';
import { hashCanonical } from '../core/canonical-json.js';
import { InputError } from '../core/errors.js';
import { type FastDtwFlavor, PreparedSymbolEmbeddings, referenceDtw } from '../metrics/fastdtw.js';
import { createEmbedder, type EmbedderOptions } from '../models/embeddings.js';
import type { RunStore } from '../store/run-store.js';
import type { MemoryObservation } from './analysis.js';
import { isEmbeddingsFile, type MemoryConfig } from './config.js';
import { memoryRunSetup, scoreMemoryRun } from './observations.js';
import type { PerturbationTier } from './perturbations.js';
import { int, num, para, text } from '../report/document/cells.js';
import { sectionsMarkdown } from '../report/document/render-markdown.js';
import type { DocumentSection } from '../report/document/types.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * The `dtw-reference` comparison metric of docs/decisions.md#d5: each scored sample against its
 * no-memory reference (sample 0) with the DriftLens authors' DTW — fastdtw over cosine
 * distances of symbol embeddings, ÷ alignment path length — reported as drift (= normalized)
 * and as the code's `dtw_score` (= 1 − normalized). For comparison with their numbers only;
 * it enters no statistic, test or verdict of the report.
 */

export type ReferenceMetricConfig = NonNullable<MemoryConfig['referenceMetric']>;

/** Vectors of the symbols a run needs, and where they came from. */
export interface SymbolEmbeddingTable {
  /** `file:<path>` or `model:<model ref>`. */
  source: string;
  vectors: ReadonlyMap<string, readonly number[]>;
}

/** A JSON object `{ "<symbol>": [numbers…], … }`, every vector finite, non-empty and of one dimension. */
export function readEmbeddingsFile(file: string): Map<string, number[]> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read the embeddings file: ${(error as Error).message}`, { file });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON: ${(error as Error).message}`, { file });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InputError('expected an object mapping each symbol to its embedding vector', { file });
  }
  const vectors = new Map<string, number[]>();
  let dimension = -1;
  for (const [symbol, value] of Object.entries(parsed)) {
    const where = { file, line: lineOf(text, symbol), field: symbol };
    if (!Array.isArray(value) || value.length === 0 || !value.every((c) => typeof c === 'number' && Number.isFinite(c))) {
      throw new InputError('must be a non-empty array of finite numbers', where);
    }
    if (dimension < 0) dimension = value.length;
    if (value.length !== dimension) throw new InputError(`has dimension ${value.length}, expected ${dimension} like the first`, where);
    if (!value.some((c) => c !== 0)) throw new InputError('is a zero vector (no cosine distance)', where);
    vectors.set(symbol, value as number[]);
  }
  return vectors;
}

/** 1-based line of a key in the JSON text, when it can be found. */
function lineOf(text: string, key: string): number | undefined {
  const at = text.indexOf(JSON.stringify(key));
  return at < 0 ? undefined : text.slice(0, at).split('\n').length;
}

/** The text embedded for a symbol: the authors embed the subcategory name (their symbol); `unmapped` stays itself. */
export function embeddingText(symbol: string, text: ReferenceMetricConfig['embedText']): string {
  if (text === 'symbol') return symbol;
  const slash = symbol.lastIndexOf('/');
  return slash < 0 ? symbol : symbol.slice(slash + 1);
}

/** Per model reference: text → vector, so a symbol is embedded once per process. */
const modelCache = new Map<string, Map<string, number[]>>();

export interface LoadEmbeddingsOptions extends EmbedderOptions {
  signal?: AbortSignal;
}

/**
 * Vectors for `symbols` from a `.json` file or an embeddings model (each distinct text fetched
 * once and cached). A symbol the file lacks is an InputError naming the file.
 */
export async function loadSymbolEmbeddings(
  config: Pick<ReferenceMetricConfig, 'embeddings' | 'embedText'>,
  symbols: Iterable<string>,
  options: LoadEmbeddingsOptions = {},
): Promise<SymbolEmbeddingTable> {
  const wanted = [...new Set(symbols)].sort();
  const vectors = new Map<string, readonly number[]>();
  if (isEmbeddingsFile(config.embeddings)) {
    const file = readEmbeddingsFile(config.embeddings);
    const missing = wanted.filter((symbol) => !file.has(symbol));
    if (missing.length > 0) {
      const shown = missing
        .slice(0, 5)
        .map((s) => JSON.stringify(s))
        .join(', ');
      throw new InputError(`no embedding for ${missing.length} symbol(s) of the run: ${shown}${missing.length > 5 ? ', …' : ''}`, {
        file: config.embeddings,
      });
    }
    for (const symbol of wanted) vectors.set(symbol, file.get(symbol) as number[]);
    return { source: `file:${config.embeddings}`, vectors };
  }
  const cache = getOrInsert(modelCache, config.embeddings, () => new Map<string, number[]>());
  const texts = [...new Set(wanted.map((symbol) => embeddingText(symbol, config.embedText)))].filter((text) => !cache.has(text));
  if (texts.length > 0) {
    const embedder = createEmbedder(config.embeddings, options);
    const fetched = await embedder.embed(texts, options.signal === undefined ? {} : { signal: options.signal });
    for (const [i, text] of texts.entries()) cache.set(text, fetched[i] as number[]);
  }
  for (const symbol of wanted) vectors.set(symbol, cache.get(embeddingText(symbol, config.embedText)) as number[]);
  return { source: `model:${config.embeddings}`, vectors };
}

export interface ReferenceMetricGroup {
  condition: string;
  tier: PerturbationTier;
  /** Scored observations. */
  n: number;
  /** Mean normalized cosine-fastDTW (drift, lower = more stable); null when n = 0. */
  drift: number | null;
  /** Mean of the code's dtw_score = 1 − normalized. */
  dtwScore: number | null;
  /** Sample standard deviation of the drift (null below 2 observations). */
  driftSd: number | null;
}

export interface ReferenceMetricReport {
  metric: 'dtw-reference';
  description: string;
  embeddings: { source: string; embedText: ReferenceMetricConfig['embedText']; dimension: number; symbols: number; sha256: string };
  radius: number;
  flavor: FastDtwFlavor;
  /** Always against the no-memory reference (sample 0), as the authors score against one stored trajectory. */
  pairing: 'reference';
  scored: number;
  targets: Array<{ target: string; n: number; drift: number | null; dtwScore: number | null; conditions: ReferenceMetricGroup[] }>;
}

const DESCRIPTION =
  "The DriftLens authors' released DTW (docs/decisions.md#d5 `dtw-reference`): fastdtw over cosine distances between symbol embeddings, " +
  'normalized by the alignment path length; dtwScore = 1 − drift as their scripts report it. For comparison with their numbers only: ' +
  'the report’s statistics use the paper’s exact discrete DTW.';

function summarize(values: readonly number[]): { n: number; drift: number | null; dtwScore: number | null; driftSd: number | null } {
  const n = values.length;
  if (n === 0) return { n, drift: null, dtwScore: null, driftSd: null };
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = n < 2 ? null : Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  return { n, drift: mean, dtwScore: 1 - mean, driftSd: sd };
}

const TIER_ORDER: Record<PerturbationTier, number> = { none: 0, noise: 1, persona: 2, life_event: 3 };

/**
 * dtw-reference for every scored observation (its symbols against `baselineSymbols`, the
 * reference), summarized per target and condition. Pure.
 */
export function referenceMetricReport(
  observations: readonly MemoryObservation[],
  embeddings: SymbolEmbeddingTable,
  settings: Pick<ReferenceMetricConfig, 'radius' | 'flavor' | 'embedText'>,
): ReferenceMetricReport {
  // Checked once for the whole report, not once per observation.
  const embed = new PreparedSymbolEmbeddings(embeddings.vectors);
  const groups = new Map<string, { target: string; condition: string; tier: PerturbationTier; values: number[] }>();
  let scored = 0;
  for (const o of observations) {
    if (o.status !== 'scored' || o.baselineSymbols === null || o.symbols === null) continue;
    const result = referenceDtw(o.baselineSymbols, o.symbols, embed, { radius: settings.radius, flavor: settings.flavor });
    // Scored observations have non-empty sequences, so the reference's NaN (→ dtw_score 0) cannot occur.
    const key = JSON.stringify([o.target, o.condition]);
    getOrInsert(groups, key, () => ({ target: o.target, condition: o.condition, tier: o.tier, values: [] })).values.push(result.normalized);
    scored++;
  }
  const byTarget = new Map<string, ReferenceMetricReport['targets'][number] & { all: number[] }>();
  const ordered = [...groups.values()].sort(
    (a, b) => a.target.localeCompare(b.target) || TIER_ORDER[a.tier] - TIER_ORDER[b.tier] || a.condition.localeCompare(b.condition),
  );
  for (const group of ordered) {
    const entry = getOrInsert(byTarget, group.target, () => ({ target: group.target, n: 0, drift: null, dtwScore: null, conditions: [], all: [] }));
    entry.conditions.push({ condition: group.condition, tier: group.tier, ...summarize(group.values) });
    entry.all.push(...group.values);
  }
  const vectors = [...embeddings.vectors.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    metric: 'dtw-reference',
    description: DESCRIPTION,
    embeddings: {
      source: embeddings.source,
      embedText: settings.embedText,
      dimension: vectors[0]?.[1].length ?? 0,
      symbols: vectors.length,
      sha256: hashCanonical(vectors),
    },
    radius: settings.radius,
    flavor: settings.flavor,
    pairing: 'reference',
    scored,
    targets: [...byTarget.values()].map(({ all, ...entry }) => {
      const overall = summarize(all);
      return { ...entry, n: overall.n, drift: overall.drift, dtwScore: overall.dtwScore };
    }),
  };
}

/** The comparison metric's section of the memory report (its data; the shared renderers draw it). */
export function referenceMetricSection(report: ReferenceMetricReport): DocumentSection {
  const e = report.embeddings;
  const d = (x: number | null) => num(x, 'fixed', 4);
  return {
    title: 'Comparison metric: dtw-reference (the authors’ code)',
    blocks: [
      para(
        `${report.description} fastdtw radius ${report.radius}, ${report.flavor} flavour; embeddings ${e.source} ` +
          `(${e.symbols} symbols, dimension ${e.dimension}, text embedded: ${e.embedText}, sha256 ${e.sha256.slice(0, 12)}); ` +
          `${report.scored} scored observations, each against the no-memory reference (sample 0).`,
      ),
      {
        kind: 'table',
        columns: ['target', 'condition', 'tier', 'n', 'drift (mean)', 'sd', 'dtw_score (mean)'].map((header) => ({ header })),
        rows: report.targets.flatMap((t) => [
          ...t.conditions.map((c) => [text(t.target), text(c.condition), text(c.tier), int(c.n), d(c.drift), d(c.driftSd), d(c.dtwScore)]),
          [text(t.target), text('all', { mark: true }), text(''), int(t.n), d(t.drift), text(''), d(t.dtwScore)],
        ]),
      },
    ],
  };
}

export const renderReferenceMetricMarkdown = (report: ReferenceMetricReport): string => sectionsMarkdown([referenceMetricSection(report)]);

/**
 * dtw-reference of a stored memory run when its config has `referenceMetric`, else null.
 * Embeddings come from the configured file or model (the only I/O here).
 */
export async function memoryReferenceMetric(store: RunStore, runId: string, options: LoadEmbeddingsOptions = {}): Promise<ReferenceMetricReport | null> {
  const { config } = await memoryRunSetup(store, runId);
  const settings = config.referenceMetric;
  if (settings === undefined) return null;
  const { observations } = await scoreMemoryRun(store, runId, { pairing: 'reference' });
  const symbols = new Set<string>();
  for (const o of observations) {
    if (o.status !== 'scored') continue;
    for (const s of o.baselineSymbols ?? []) symbols.add(s);
    for (const s of o.symbols ?? []) symbols.add(s);
  }
  const table = await loadSymbolEmbeddings(settings, symbols, options);
  return referenceMetricReport(observations, table, settings);
}
