import type { FinishReason, ModelRequest, TokenUsage, ToolCall } from '../models/types.js';

/** Descriptive labels of a cell (experiment, arm, position, probe, …). Not part of the key. */
export type CellLabels = Record<string, string | number | boolean | null>;

/**
 * A cell is the unit of work: one model call. Everything that decides the call
 * is in `request`; its key is the SHA-256 of the canonical JSON of `request`.
 * `labels` say what the cell means to an experiment and never change the key,
 * so the same call shared by two experiments runs once.
 */
export interface CellSpec {
  request: ModelRequest;
  labels: CellLabels;
  /**
   * Earlier shapes of the same call, oldest last: a store written before a prompt was
   * rearranged holds the cell under the key of one of these, and a resume keeps that key
   * (and its answer) instead of calling again. Never part of the key.
   */
  legacyRequests?: readonly ModelRequest[];
}

export type CellStatus = 'pending' | 'done' | 'empty' | 'failed';

export interface CellResult {
  key: string;
  status: CellStatus;
  attempts: number;
  text: string | null;
  reasoning: string | null;
  finishReason: FinishReason | null;
  usage: TokenUsage;
  latencyMs: number | null;
  costUsd: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  /** ISO timestamps. */
  startedAt: string | null;
  finishedAt: string | null;
  /** True when the result came from the store instead of a call in this run. */
  cached: boolean;
  /** The model id (and system fingerprint, where the wire gives one) the provider said answered, when it said. */
  responseModel?: string;
  /** Tool calls the model emitted, when the request offered tools and it called one. */
  toolCalls?: ToolCall[];
}

export interface RunManifest {
  /** What kind of experiment produced the run (`persona`, `memory`, `ask`, …). */
  experiment: string;
  /** The validated configuration, as recorded (never contains API keys). */
  config: unknown;
  seed: number;
  versions: Record<string, string>;
  gitCommit: string | null;
  /** Free-form notes: decisions/options in force for this run. */
  options?: Record<string, unknown>;
  /**
   * The measurement this run is (experiment/measurement.ts): design id, when it was measured, its tag,
   * and the salt of its cells' keys. Absent on runs written before measurements existed.
   */
  measurement?: { designId: string; measuredAt: string; tag?: string | null; salt?: string | null };
}
