import { incompleteRunMessage } from '../../experiment/run-completeness.js';
import type { StageProgress } from '../../store/run-stages.js';
import type { RunInfo } from '../../store/run-store.js';
import type { ViewerData } from './data.js';
import { auditVerdicts } from '../document/build.js';

/**
 * The run list's verdict and status columns. A verdict is read only from a complete run (the
 * same rule as the report and the gate): an incomplete run's numbers would change when it
 * resumes, so its verdict cell says why there is none.
 */

export type VerdictTone = 'alert' | 'ok' | 'neutral';

export interface RunListVerdict {
  /** One short line per target (`openai:gpt-4.1: drift`), or why there is no verdict. */
  lines: string[];
  tone: VerdictTone;
}

export interface RunListStatus {
  /** `complete`, `incomplete`, `failed`. */
  word: 'complete' | 'incomplete' | 'failed';
  /**
   * What the store says (`120 cells`, `7 of 120 cells failed`); for an incomplete run the report's and the
   * gate's refusal (`incomplete run: stage labeling has 0 of 960 cells — re-run the same command to finish`).
   */
  detail: string;
}

/** `stages`: the run's stage ledger (`store.stages(run.id)`). */
export function runListStatus(run: RunInfo, stages: readonly StageProgress[]): RunListStatus {
  const { total, pending, failed } = run.counts;
  if (run.status === 'failed') return { word: 'failed', detail: `${failed} of ${total} cells failed` };
  const incomplete = incompleteRunMessage(run, stages);
  if (incomplete === null && pending === 0) return { word: 'complete', detail: `${total} cells` };
  return { word: 'incomplete', detail: incomplete ?? `incomplete run: ${pending} of ${total} cells pending — re-run the same command to finish` };
}

const TONE_RANK: Record<VerdictTone, number> = { alert: 2, neutral: 1, ok: 0 };

export async function runListVerdict(data: ViewerData, storeIndex: number, run: RunInfo, stages: readonly StageProgress[]): Promise<RunListVerdict> {
  if (runListStatus(run, stages).word !== 'complete') return { lines: ['no verdict: the run is incomplete'], tone: 'neutral' };
  const audit = data.auditOf(run);
  if (!audit) return { lines: [`no verdict: no audit is registered for ${run.experiment} runs`], tone: 'neutral' };
  let analysis: Awaited<ReturnType<ViewerData['analysis']>>;
  try {
    analysis = await data.analysis(storeIndex, run.id);
  } catch (error) {
    return { lines: [`no verdict: the analysis failed (${(error as Error).message})`], tone: 'neutral' };
  }
  if (!analysis) return { lines: ['no verdict'], tone: 'neutral' };
  const { render } = analysis.audit;
  const verdicts = render.document || render.headline ? auditVerdicts(analysis.audit, analysis.analyzed) : [];
  if (verdicts.length > 0) {
    const tone = verdicts.reduce<VerdictTone>((worst, v) => (TONE_RANK[v.tone] > TONE_RANK[worst] ? v.tone : worst), 'ok');
    return { lines: verdicts.map((v) => `${v.subject}: ${v.verdict}`), tone };
  }
  const summary = analysis.audit.render.viewerSummary(analysis.analyzed)[0];
  return { lines: summary ? [`${summary.label}: ${summary.value}`] : ['no verdict'], tone: 'neutral' };
}
