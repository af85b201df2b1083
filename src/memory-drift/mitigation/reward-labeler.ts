import { type ParsedItem, type ParsedOutcome, runParsedStage, type StageRuntime } from '../../experiment/runtime.js';
import type { RunCellsResult } from '../../store/runner.js';
import type { RunStore } from '../../store/run-store.js';
import { buildLabelerMessages, buildLabelerReaskMessages, DEFAULT_LABELER_REASKS, parseLabelerOutput } from '../labeler.js';
import type { Ontology } from '../ontology.js';
import { extractSteps } from '../steps.js';
import { isPreparedLabel, type LabelPromptSetup, labelerRequest, type PreparedLabel, requestOfPrepared } from './reward-label-prompt.js';
import { nextTurn } from '../../core/next-turn.js';

/** A response to label: its steps built here, or its labeller request prepared elsewhere (a worker). */
interface Miss {
  steps: string[] | null;
  prepared: PreparedLabel | null;
  stepCount: number;
  resolve: (o: LabelOutcome) => void;
  reject: (e: unknown) => void;
}

/** Most steps labelled for one response (DriftLens answers have a handful; a longer one is an item error). */
export const DEFAULT_MAX_STEPS = 128;

export type LabelOutcome = { ok: true; symbols: string[]; steps: number } | { ok: false; error: string };

export interface LabelerCacheStats {
  lookups: number;
  /** Served from the in-memory LRU (or joined an identical in-flight lookup). */
  memoryHits: number;
  /** Labeler cells already in the run store (no call). */
  storeHits: number;
  /** Labeler calls actually made (re-asks included). */
  calls: number;
  /** Responses without steps: nothing to label. */
  noSteps: number;
}

export interface CachedLabelerOptions {
  store: RunStore;
  runId: string;
  labeler: string;
  ontology: Ontology;
  /** Entries kept in memory (default 50,000). */
  cacheSize?: number;
  reasks?: number;
  runtime?: StageRuntime;
  /**
   * Labeler cells per run segment (default 2,000). The runner reads every result of a run
   * before each stage, so a long-lived server would slow down as its run grows; after this many
   * cells it continues in a new run `<runId>.<n>` (cells are keyed globally, so the store cache
   * still spans segments).
   */
  segmentCells?: number;
  /** Most steps labelled for one response (default 128); a response with more is an item error. */
  maxSteps?: number;
  /**
   * Runs the labeler cells as a stage of an audit run (`runAudit`'s `parsedStage`, which records
   * the stage and tallies the run's budget) instead of directly in `runId` and its segments.
   */
  parsedStage?: LabelerStage;
  /**
   * Most characters of steps sent in one labeler stage of its own runs (default 1,000,000; not
   * used with `parsedStage`). A stage's prompts are built, hashed and stored in one synchronous
   * stretch, so a batch of megabyte responses is cut into several stages, run one after another:
   * the thread (a reward server's, answering /health) is never held for more than about one
   * maximal response's worth of that work. (Labeller calls of one batch of megabyte responses are
   * then sequential; a batch of ordinary responses is one stage, as before.)
   */
  stageChars?: number;
}

/** A stage runner for labeler cells (see `CachedLabelerOptions.parsedStage`). */
export type LabelerStage = (
  items: readonly ParsedItem<string[]>[],
  retries: number,
) => Promise<{ outcomes: ParsedOutcome<string[]>[]; stages: RunCellsResult[] }>;

/**
 * Labels responses for the reward: steps (docs/decisions.md#d7) → one labeler cell (with re-asks) →
 * ô(y). Identical responses never cost twice: an in-memory LRU keyed by the response text,
 * identical lookups in flight share one promise, and the labeler cells themselves are cached
 * in the run store across restarts.
 */
export class CachedLabeler {
  readonly stats: LabelerCacheStats = { lookups: 0, memoryHits: 0, storeHits: 0, calls: 0, noSteps: 0 };
  private readonly lru = new Map<string, LabelOutcome>();
  private readonly inFlight = new Map<string, Promise<LabelOutcome>>();
  private readonly cacheSize: number;
  private segment = 0;
  private segmentFill = 0;
  private currentRunId: string;

  /** What a worker thread needs to build this labeller's requests (reward-label-prompt.ts). */
  get promptSetup(): LabelPromptSetup {
    return { model: this.options.labeler, ontology: this.options.ontology };
  }

  /** Most steps labelled for one response. */
  get maxSteps(): number {
    return this.options.maxSteps ?? DEFAULT_MAX_STEPS;
  }

  constructor(private readonly options: CachedLabelerOptions) {
    this.cacheSize = options.cacheSize ?? 50_000;
    this.currentRunId = options.runId;
  }

  private runForQueue: Promise<unknown> = Promise.resolve();

  /** The run the next stage goes to; one call at a time (stages of one batch run at once). */
  private runFor(cells: number): Promise<string> {
    const next = this.runForQueue.then(() => this.nextRun(cells));
    this.runForQueue = next.catch(() => undefined);
    return next;
  }

  /** The run the next stage goes to, opening a new segment when the current one is full. */
  private async nextRun(cells: number): Promise<string> {
    const limit = this.options.segmentCells ?? 2_000;
    if (this.segmentFill > 0 && this.segmentFill + cells > limit) {
      this.segment++;
      this.segmentFill = 0;
      const { store, runId } = this.options;
      const id = `${runId}.${this.segment}`;
      if ((await store.getRun(id)) === undefined) {
        const base = (await store.requireRun(runId)).manifest;
        await store.createRun({ ...base, options: { ...base.options, segmentOf: runId, segment: this.segment } }, { id });
      }
      this.currentRunId = id;
    }
    this.segmentFill += cells;
    return this.currentRunId;
  }

  private remember(response: string, outcome: LabelOutcome): void {
    this.lru.delete(response);
    this.lru.set(response, outcome);
    if (this.lru.size > this.cacheSize) this.lru.delete(this.lru.keys().next().value as string);
  }

  /**
   * Labels a batch; the result array is aligned with `responses`. `segmented[i]`, when given, is
   * `responses[i]` already segmented (its non-empty steps, as extractSteps gives them, or only
   * their number when it is over `maxSteps`, or its labeller request built from them for this
   * labeller by `prepareLabel`), e.g. by a worker thread; otherwise it is segmented here.
   */
  async labelAll(
    responses: readonly string[],
    segmented?: readonly (readonly string[] | number | PreparedLabel | null | undefined)[],
  ): Promise<LabelOutcome[]> {
    const out: Promise<LabelOutcome>[] = [];
    const misses = new Map<string, Miss>();
    let sinceYield = 0;
    for (const [index, response] of responses.entries()) {
      // Segmentation is synchronous: yield to the event loop every ~50,000 characters so that a
      // batch of long responses never holds it (a reward server's /health stays responsive).
      sinceYield += response.length;
      if (sinceYield > 50_000) {
        sinceYield = response.length;
        await nextTurn();
      }
      this.stats.lookups++;
      // A cached label (refreshed in the LRU), or an identical lookup in flight.
      const cached = this.lru.get(response);
      if (cached !== undefined) this.remember(response, cached);
      const known = cached !== undefined ? Promise.resolve(cached) : this.inFlight.get(response);
      if (known !== undefined) {
        this.stats.memoryHits++;
        out.push(known);
        continue;
      }
      const given = segmented?.[index];
      const prepared = isPreparedLabel(given) ? given : null;
      const steps =
        prepared !== null || typeof given === 'number'
          ? null
          : [...((given as readonly string[] | null | undefined) ?? extractSteps(response).steps.filter((s) => s.trim() !== ''))];
      const stepCount = prepared?.stepCount ?? steps?.length ?? (given as number);
      // Bounded work per response: thousands of steps (a degenerate or hostile output) are not labelled.
      const maxSteps = this.maxSteps;
      const settled: LabelOutcome | undefined =
        (steps === null && prepared === null) || stepCount > maxSteps
          ? { ok: false, error: `response has ${stepCount} steps; at most ${maxSteps} are labelled (not scored)` }
          : stepCount === 0
            ? { ok: true, symbols: [], steps: 0 }
            : undefined;
      if (settled !== undefined) {
        if (settled.ok) this.stats.noSteps++;
        this.remember(response, settled);
        out.push(Promise.resolve(settled));
        continue;
      }
      const promise = new Promise<LabelOutcome>((resolve, reject) => misses.set(response, { steps, prepared, stepCount, resolve, reject }));
      this.inFlight.set(response, promise);
      out.push(promise);
    }
    if (misses.size > 0) await this.runMisses(misses);
    return Promise.all(out);
  }

  /** Labeler stages run so far (cells sent to the store's runner, cached or not). */
  stagesRun = 0;

  private async runMisses(misses: Map<string, Miss>): Promise<void> {
    const entries = [...misses.entries()];
    if (this.options.parsedStage !== undefined) return this.runStage(entries, false);
    const limit = this.options.stageChars ?? 1_000_000;
    const groups: (typeof entries)[] = [];
    let chars = Number.POSITIVE_INFINITY;
    for (const entry of entries) {
      // A prepared request counts its prompt (the steps and their numbering).
      const { steps, prepared } = entry[1];
      const size = steps !== null ? steps.reduce((n, step) => n + step.length, 0) : prepared!.messages.reduce((n, m) => n + m.content.length, 0);
      if (chars + size > limit) {
        groups.push([]);
        chars = 0;
      }
      groups.at(-1)!.push(entry);
      chars += size;
    }
    // One stage after another: each does its work in slices with yields between them, and the
    // event loop runs one slice of every job in progress per turn, so stages run at once would
    // multiply the time a /health request waits behind them.
    for (const group of groups) await this.runStage(group, true);
  }

  /** One labeler stage for `entries`; settles each entry's promise (never rejects). */
  private async runStage(entries: [string, Miss][], yieldBetween: boolean): Promise<void> {
    const { store, labeler, ontology } = this.options;
    const items: ParsedItem<string[]>[] = [];
    for (const [index, [, { steps, prepared, stepCount }]] of entries.entries()) {
      // Each prompt holds a whole response: let the event loop in between building them.
      if (yieldBetween && index > 0) await nextTurn();
      items.push({
        spec: {
          // Built in a worker, with the store's hashes (recorded so that the store does not hash it again), or here.
          request: prepared !== null ? requestOfPrepared(labeler, prepared) : labelerRequest(labeler, buildLabelerMessages(steps!, ontology)),
          labels: { experiment: 'memory-reward', stage: 'labeler', steps: stepCount, attempt: 0 },
        },
        parse: (text) => {
          const parsed = parseLabelerOutput(text, { stepCount, ontology });
          return parsed.ok ? { ok: true, value: parsed.symbols } : { ok: false, error: `${parsed.reason}: ${parsed.detail}` };
        },
        reask: (previous, bad) => {
          const parsed = parseLabelerOutput(bad, { stepCount, ontology });
          const failure = parsed.ok ? { reason: 'schema' as const, detail: 'unusable' } : parsed;
          return buildLabelerReaskMessages(previous, bad, failure, stepCount);
        },
      });
    }
    // The stage hashes and stores the prompts in the same synchronous stretch as its first await
    // (the store's calls settle at once): not in the same turn as the last prompt's building.
    if (yieldBetween) await nextTurn();
    try {
      const retries = this.options.reasks ?? DEFAULT_LABELER_REASKS;
      this.stagesRun++;
      const { outcomes, stages } = this.options.parsedStage
        ? await this.options.parsedStage(items, retries)
        : await runParsedStage(store, await this.runFor(items.length), items, retries, { progress: false, ...this.options.runtime });
      for (const stage of stages) {
        this.stats.calls += stage.calls;
        this.stats.storeHits += stage.cached;
      }
      outcomes.forEach((outcome, i) => {
        const [response, { stepCount, resolve }] = entries[i]!;
        const result: LabelOutcome =
          outcome.status === 'ok'
            ? { ok: true, symbols: outcome.value, steps: stepCount }
            : outcome.status === 'invalid'
              ? { ok: false, error: `labeler output invalid after re-asks (${outcome.error})` }
              : { ok: false, error: `labeler call ${outcome.result.status}${outcome.result.errorMessage ? `: ${outcome.result.errorMessage}` : ''}` };
        // Failures are not cached in memory: a later request may succeed (store-level caching still applies).
        if (result.ok) this.remember(response, result);
        this.inFlight.delete(response);
        resolve(result);
      });
    } catch (error) {
      for (const [response, { reject }] of entries) {
        this.inFlight.delete(response);
        reject(error);
      }
    }
  }
}
