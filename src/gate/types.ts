/** The checks the gate makes (types only, so that the Audit protocol can name them without importing the gate). */

export type CheckStatus = 'pass' | 'fail' | 'skipped';

export interface GateCheck {
  run: string;
  /** The audit that made the check (`persona`, `memory`, `continuation`, …), or `run` for run-level checks. */
  audit: string;
  /** The model under test (target, or `target judged by judge`), or the run for run-level checks. */
  subject: string;
  /** Criterion id, e.g. `significant-drift`, `max-elevation:persona`. */
  name: string;
  status: CheckStatus;
  /** One sentence: the value, its interval and the threshold. */
  message: string;
}
