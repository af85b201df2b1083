import type { RunInfo } from '../../store/run-store.js';
import type { ViewerData } from './data.js';

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
  /** What the store says (`done 120 of 120 cells`, `interrupted: 40 of 120 cells pending`). */
  detail: string;
}

export function runListStatus(run: RunInfo): RunListStatus {
  const { total, pending, failed } = run.counts;
  if (run.status === 'failed') return { word: 'failed', detail: `${failed} of ${total} cells failed` };
  if (run.status === 'done' && pending === 0) return { word: 'complete', detail: `${total} cells` };
  const why = run.status === 'running' ? 'not finished' : run.status;
  return { word: 'incomplete', detail: `${why}: ${pending} of ${total} cells pending; the same run command resumes it` };
}

const TONE_RANK: Record<VerdictTone, number> = { alert: 2, neutral: 1, ok: 0 };

export function runListVerdict(data: ViewerData, storeIndex: number, run: RunInfo): RunListVerdict {
  if (runListStatus(run).word !== 'complete') return { lines: ['no verdict: the run is incomplete'], tone: 'neutral' };
  const audit = data.auditOf(run);
  if (!audit) return { lines: [`no verdict: no audit is registered for ${run.experiment} runs`], tone: 'neutral' };
  let analysis: ReturnType<ViewerData['analysis']>;
  try {
    analysis = data.analysis(storeIndex, run.id);
  } catch (error) {
    return { lines: [`no verdict: the analysis failed (${(error as Error).message})`], tone: 'neutral' };
  }
  if (!analysis) return { lines: ['no verdict'], tone: 'neutral' };
  const headline = analysis.audit.render.headline?.(analysis.analyzed);
  if (headline && headline.length > 0) {
    const tone = headline.reduce<VerdictTone>((worst, h) => (TONE_RANK[h.tone] > TONE_RANK[worst] ? h.tone : worst), 'ok');
    return { lines: headline.map((h) => `${h.target}: ${h.verdict}`), tone };
  }
  const summary = analysis.audit.render.viewerSummary(analysis.analyzed)[0];
  return { lines: summary ? [`${summary.label}: ${summary.value}`] : ['no verdict'], tone: 'neutral' };
}
