import type { z } from 'zod';
import type { auditLimitsSchema } from './limits-schema.js';
import type { AuditGateThresholds, GateThresholds } from '../gate/config.js';
import type { GateCheck } from '../gate/types.js';
import type { AuditSeries, CompareRunsOptions, RunDifference } from '../report/compare-types.js';
import type { AuditDocumentPart } from '../report/document/types.js';
import type { CellMeasure, CellReferences, IndexedCell, PairRule, Verdict } from '../report/viewer/types.js';
import type { TestCalibration } from '../stats/calibration.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import type { StageDeclaration } from '../store/run-stages.js';
import type { RunCellsResult } from '../store/runner.js';
import type { CellSpec } from '../store/types.js';
import type { PlanEstimate } from '../models/estimate.js';
import type { PreflightProblem } from './preflight.js';
import type { StageTally } from './stage-tally.js';
import type { ModelAdapter } from '../models/types.js';
import type { Session } from '../sessions/types.js';
import type { ParsedItem, ParsedOutcome, StageRuntime } from './runtime.js';

/**
 * The Audit protocol. An audit (persona drift, memory drift, …) is one object
 * that says how to read its config, plan and execute its stages of cells, read
 * a finished run back (collect), analyse it and render the analysis. Everything
 * else — opening the store, the manifest, Ctrl-C, rate limits, the budget,
 * spend, closing, exit codes, the report's page, the viewer — is shared and
 * lives in `runAudit` (run-audit.ts), `report/` and the viewer, which loop over
 * the registry (registry.ts).
 *
 * Members are declared as methods so that an `Audit<PersonaConfig, …>` is an
 * `AnyAudit` for the registry.
 */

/** Rate and budget limits a config sets (its `limits:` section); runtime flags override them. */
export type AuditLimits = z.infer<typeof auditLimitsSchema>;

/** What `execute` drives its stages through; spend and stops are tallied by `runAudit`. */
export interface AuditRunContext<Config, Input> {
  config: Config;
  input: Input;
  store: RunStore;
  runId: string;
  resumed: boolean;
  /** The first stage's cells, as `plan` made them. */
  specs: readonly CellSpec[];
  /** Limits, signals and progress already applied. */
  runtime: StageRuntime;
  /** Runs one stage of cells (cached, resumable). */
  stage(specs: readonly CellSpec[], label: string): Promise<RunCellsResult>;
  /** Runs cells whose output must parse, re-asking up to `retries` times (see runtime.ts). */
  parsedStage<T>(items: readonly ParsedItem<T>[], retries: number, label: string): Promise<{ outcomes: ParsedOutcome<T>[]; stages: RunCellsResult[] }>;
  /** True once any stage stopped early (Ctrl-C, budget): `execute` should return what it has. */
  readonly stopped: boolean;
}

/** A finished (or stopped) run: the shared fields plus the audit's own counts. */
export interface AuditRunResult<Result> {
  audit: string;
  runId: string;
  resumed: boolean;
  /** A stage stopped early (Ctrl-C or budget); the same command resumes. */
  interrupted: boolean;
  /** Why it stopped early (null when it finished). */
  stopReason: 'interrupted' | 'budget' | 'fatal' | null;
  /** Dollars over the cells whose model has a known price. */
  spendUsd: number;
  /** Cells answered by a model without a known price: the run's total cost is unknown when > 0. */
  unpricedCells: number;
  result: Result;
  /** Each stage that ran, with the progress line's label and counts (re-asks are stages of their own). */
  stages?: StageTally[];
}

/** What the library's `run<Audit>` functions return besides the audit's counts. */
export interface AuditRunSummary extends Pick<AuditRunResult<unknown>, 'runId' | 'resumed' | 'interrupted' | 'stopReason' | 'unpricedCells'> {
  /** What the run cost, or null when some cells' model has no known price (unknown, never $0). */
  spendUsd: number | null;
  /** Dollars over the cells whose model has a known price. */
  pricedSpendUsd: number;
  /** The budget in force, and one covering the whole grid's estimate (when a budget was set). */
  budget?: { maxCostUsd: number; suggestedUsd: string };
}

/** What a preflight hands on: the prepared inputs, the plan it checked and, when a budget is set, the grid's estimate. */
export interface AuditPreflight<Input> {
  input: Input;
  /** The first stage's cells as `plan` made them; passed to `runAudit` so the run does not plan again. */
  specs?: CellSpec[];
  estimate?: PlanEstimate;
  /** Every model the run calls, as the config names them (the dry run lists their cache settings). */
  models?: readonly string[];
  /** Missing API keys a dry run let through (a real run stops on them). */
  keyWarnings?: PreflightProblem[];
}

/** A dry run: cell counts and estimate, as lines for the terminal. */
export interface AuditDryRun {
  lines: string[];
}

/** What a renderer gets: the run, what `collect` read and what `analyze` made of it. */
export interface AnalyzedRun<Collected, Report> {
  run: RunInfo;
  collected: Collected;
  report: Report;
}

export interface AnalyzeOptions {
  /** Bootstrap replicates (default: the run config's value). */
  B?: number;
}

/**
 * One row of the long-format CSV after the run and experiment columns, in the
 * order of AUDIT_CSV_COLUMNS: table, target, judge, group, label, estimate,
 * ci_low, ci_high, n, p, p_adjusted (null/undefined = empty).
 */
export type AuditCsvRow = unknown[];

export const AUDIT_CSV_COLUMNS = ['table', 'target', 'judge', 'group', 'label', 'estimate', 'ci_low', 'ci_high', 'n', 'p', 'p_adjusted'] as const;

/** A headline number of a run for the viewer's run page and listings. */
export interface AuditSummaryLine {
  label: string;
  value: string;
}

/** One number of a report's first screen: a short label, the value (with its CI) and a line of context. */
export interface AuditHeadlineNumber extends AuditSummaryLine {
  detail?: string;
}

/** A target's verdict and the three or four numbers that matter, for the first screen of the report. */
export interface AuditHeadlineTarget {
  /** The target model (with its judge or labeler where the audit has one). */
  target: string;
  verdict: string;
  /** How the verdict reads: `alert` = drift / failed check, `ok` = none found, `neutral` = inconclusive or not computable. */
  tone: 'alert' | 'ok' | 'neutral';
  numbers: AuditHeadlineNumber[];
}

export interface AuditRenderers<Collected, Report> {
  /**
   * The run's first screen: a verdict per target with its key numbers, each
   * formatted from the same analysis object `json` returns. Optional for
   * audits outside this package; the report falls back to `viewerSummary`.
   */
  headline?(analyzed: AnalyzedRun<Collected, Report>): AuditHeadlineTarget[];
  /**
   * The run's verdicts as data (estimate, interval, p, MDE, underpowered and fragile flags) and its
   * report sections (tables of typed cells, charts as data, notes), for the result document every
   * surface reads (report/document/): the shared renderers draw the HTML and Markdown of every
   * audit from it. Optional: without it the verdicts are the headline's cards and the section is
   * a table of the CSV rows.
   */
  document?(analyzed: AnalyzedRun<Collected, Report>): AuditDocumentPart;
  /** Long-format CSV rows (one estimate per row). */
  csvRows(analyzed: AnalyzedRun<Collected, Report>): AuditCsvRow[];
  /** The value stored under the audit's name in the JSON report. */
  json(analyzed: AnalyzedRun<Collected, Report>): unknown;
  /** A few headline lines for the viewer. */
  viewerSummary(analyzed: AnalyzedRun<Collected, Report>): AuditSummaryLine[];
}

export interface AuditCalibrationOptions {
  replicates: number;
  seed: number;
  /** Bootstrap replicates inside each simulated analysis. */
  B?: number;
  alpha?: number;
}

/** The operating characteristics of an audit's tests over simulated runs (stats/calibration.ts). */
export interface AuditCalibration {
  audit: string;
  replicates: number;
  tests: TestCalibration[];
  notes: string[];
}

/**
 * An audit's CI gate: its threshold keys (schema, defaults, `echolens gate` flags) and the
 * checks it makes of an analysis.
 */
export interface AuditGate<Report> extends AuditGateThresholds {
  /** One check per criterion and subject; `skipped` with the reason where a statistic is missing. `thresholds` holds every audit's keys: read your own. */
  check(report: Report, thresholds: GateThresholds, runId: string): GateCheck[];
}

/**
 * What an audit adds to the viewer's pages besides its report section: each member optional.
 * The viewer's filters come from the cells' labels without any of them.
 */
export interface AuditViewer<Collected> {
  /** The winning judge verdict per target cell key and judge, from the run's judge cells (re-asks resolved as the analysis does). */
  judgeVerdicts?(judgeCells: readonly IndexedCell[]): Map<string, Map<string, Verdict>>;
  /** Per-cell numbers from what `collect` read (columns and range filters of the cell list). */
  cellMeasures?(cells: readonly IndexedCell[], collected: Collected): CellMeasure[];
  /** How a cell's paired cell in the design is found (shown side by side on the cell page). */
  readonly pairing?: PairRule;
  /** The cells scored against a cell that has no pair of its own (e.g. a no-memory reference answer). */
  referencedBy?(cells: readonly IndexedCell[], cell: IndexedCell): CellReferences | undefined;
}

/** One event of a live probe's stream (server-sent: `event:` and a JSON `data:` line). */
export interface LiveProbeEvent {
  event: string;
  data: unknown;
}

/**
 * A live probe's page as data: the viewer renders it (report/viewer/live-probe-page.ts) and its
 * script drives the form (the arms `real`, `filler`, `anchor` and the switches `framed`, `anchor`).
 */
export interface LiveProbePage {
  title: string;
  /** What is sent where and how it is scored, in plain text (the viewer adds the target and judge). */
  note: string;
  target: string;
  judge: string;
  sessions: ReadonlyArray<{ index: number; id: string; name: string; total: number; positions: ReadonlyArray<{ label: string; value: number }> }>;
  /** Built-in probes offered to fill the text box. */
  presets: ReadonlyArray<{ id: string; category: string; text: string }>;
  maxProbeChars: number;
  /** Check boxes sent with the request; `arm` names the arm a box shows or hides. */
  switches: ReadonlyArray<{ id: string; label: string; checked: boolean; arm?: string }>;
  /** One pane per context the probe is sent in. */
  arms: ReadonlyArray<{ id: string; title: string }>;
}

/** A live probe prepared over the viewer's sessions. */
export interface PreparedLiveProbe {
  /** The page, as data. */
  page(): LiveProbePage;
  /** Checks a request body; throws an EcholensError naming the bad field (the viewer answers 400). */
  parse(body: unknown): unknown;
  /** Runs a parsed request, emitting events as they come, until done or `signal` aborts. */
  run(request: unknown, models: { target: ModelAdapter; judge: ModelAdapter }, emit: (event: LiveProbeEvent) => void, signal: AbortSignal): Promise<void>;
}

/** An audit's live probe in the viewer (`echolens view --session …`, page /probe). */
export interface AuditLiveProbe {
  prepare(sessions: readonly Session[], options: { target: string; judge: string; positions?: number }): PreparedLiveProbe;
}

/** A commented starter config: every key shown valid as written. */
export interface AuditInitTemplate {
  /** Default file name, e.g. `persona.yaml`. */
  file: string;
  /** The YAML text (init puts the editor's schema line above it). */
  text: string;
}

/** The part of an audit `runAudit` needs: plan and execute its stages. */
export interface AuditRunner<Config = unknown, Input = unknown, Result = unknown> {
  /** The experiment name recorded in run manifests and cell labels (`persona`, `memory`). */
  readonly name: string;
  /** The limits the config sets. */
  limits(config: Config): AuditLimits;
  /** Reads what the plan needs besides the config (sessions, question sets, …). */
  prepare(config: Config): Promise<Input>;
  /** The first stage's cells (what a dry run counts). Pure apart from reading inputs. */
  plan(config: Config, input: Input): CellSpec[];
  /** Recorded in the run manifest next to the config. */
  manifestOptions(config: Config, input: Input): Record<string, unknown>;
  /**
   * Checks everything a run needs before anything is recorded (references resolve, keys are
   * set, files exist, the grid fits the budget) and prepares the inputs; throws a
   * PreflightError listing every problem. Optional: without it, `prepare` is used.
   */
  preflight?(config: Config, runtime: StageRuntime): Promise<AuditPreflight<Input>>;
  /** Refuses to resume a run (in the store file `db`) whose inputs changed: throw a ConfigError. Optional. */
  checkResume?(run: RunInfo, config: Config, input: Input, db: string): void;
  /**
   * The stages `execute` runs, in order, each named as `execute` names it (`ctx.stage(specs, name)`)
   * with its planned cell count (null when it depends on earlier stages' answers). `runAudit`
   * records them when the run opens; the run is `done` only once every declared stage has all its
   * cells registered and settled, so a run killed between stages is never taken for a finished one.
   * Optional for runners outside the registry (their stages are recorded as they start).
   */
  stages?(config: Config, input: Input, specs: readonly CellSpec[]): StageDeclaration[];
  /** Runs the stages through the context and returns the audit's counts. */
  execute(context: AuditRunContext<Config, Input>): Promise<Result>;
}

/** A runner that declares its stages (what a registered audit needs). */
export type StagedAuditRunner<Config = unknown, Input = unknown, Result = unknown> = AuditRunner<Config, Input, Result> &
  Required<Pick<AuditRunner<Config, Input, Result>, 'stages'>>;

export interface Audit<Config = unknown, Input = unknown, Collected = unknown, Report = unknown, Result = unknown> extends AuditRunner<Config, Input, Result> {
  /** Heading of its report sections, e.g. "Persona drift (ContextEcho)". */
  readonly title: string;
  /** One line for `echolens audits`. */
  readonly description: string;
  /** The CLI command group that runs it (`echolens <command> run`). */
  readonly command: string;

  // ---- config ----
  readonly configSchema: z.ZodType<Config>;
  /** Loads a YAML/JSON config file with `--set` overrides (paths relative to the file). */
  loadConfig(file: string, overrides: readonly string[]): Config;

  /** The commented starter config `echolens init <name>` writes (default file name and text); optional. */
  readonly initTemplate?: AuditInitTemplate;

  // ---- planning and running (besides AuditRunner) ----
  /** Every registered audit declares its stages (see AuditRunner.stages): reports and the gate read them. */
  stages(config: Config, input: Input, specs: readonly CellSpec[]): StageDeclaration[];
  dryRun(config: Config, input: Input, priceFile?: string): AuditDryRun;
  /** One line describing a run result for the terminal. */
  describeResult(result: AuditRunResult<Result>, db: string): string;

  // ---- reading back ----
  /** Reads a run from the store: cells, re-ask chains resolved, labels decoded. */
  collect(store: RunStore, run: RunInfo): Promise<Collected>;
  /** The analysis (pure over what was collected and the run's recorded config). */
  analyze(collected: Collected, run: RunInfo, options: AnalyzeOptions): Report;
  /**
   * The CI gate's checks of an analysis (`echolens gate`, and the verdict every
   * report carries): one check per criterion and subject, `skipped` with the
   * reason where a statistic could not be computed. Optional: an audit without
   * it is gated on its cells only.
   */
  readonly gate?: AuditGate<Report>;
  /**
   * `echolens compare`: the B − A difference of each headline statistic of two analysed runs,
   * with a paired bootstrap over the design units both share (report/compare-units.ts has the
   * pairing helpers). Optional: without it, compare lists the runs and no rows.
   */
  compare?(a: AnalyzedRun<Collected, Report>, b: AnalyzedRun<Collected, Report>, options: Required<CompareRunsOptions>): RunDifference[];
  /**
   * Drift over time (`echolens history`, `compare --baseline`, `gate --baseline`, the viewer's trend
   * page): the run's headline statistics, each with its own estimate and the value of every design
   * unit, so that two measurements of one design are compared unit by unit (report/baseline.ts).
   * Optional: without it, history lists the runs and no estimates.
   */
  overTime?(analyzed: AnalyzedRun<Collected, Report>): AuditSeries[];
  /** What the viewer shows besides the report section (judge verdicts, per-cell numbers, paired cells); optional. */
  readonly viewer?: AuditViewer<Collected>;
  /** A live probe the viewer offers when it is given sessions (the first registered audit that has one); optional. */
  readonly liveProbe?: AuditLiveProbe;
  /** Operating characteristics over simulated runs; optional. */
  calibrate?(options: AuditCalibrationOptions): Promise<AuditCalibration>;

  readonly render: AuditRenderers<Collected, Report>;
}

/** Any registered audit. */
export type AnyAudit = Audit<unknown, unknown, unknown, unknown, unknown>;
