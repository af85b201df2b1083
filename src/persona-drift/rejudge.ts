import { ConfigError } from '../core/errors.js';
import type { ParsedItem } from '../experiment/runtime.js';
import type { CellLabels } from '../store/types.js';
import { type PersonaConfig, personaProcedure } from './config.js';
import { judgeItem, judgeParser, separateJudgeDraws } from './judge.js';
import { isPersonaTargetCell } from './labels.js';
import { planJudgeCell } from './plan.js';
import { personaUnitOf } from './units.js';

/**
 * `persona rejudge`, the pure half: the judge cells a persona run's judge stage would plan for
 * other judges, from the target answers the run stored (no target is called). Same planJudgeCell,
 * rubric, procedure and unit draw separation as `personaRunner.execute`, so a judge added
 * afterwards scores exactly the cells it would have scored had it been in the config. The I/O
 * (reading the run, the stages, the ledger) is in `rejudgePersonaRun` (rejudge-run.ts).
 */

/** A stored target cell of the run, as `cellResultsOfRun` gives it. */
export interface StoredTargetCell {
  key: string;
  labels: CellLabels;
  status: string;
  text: string | null;
}

/** The stage a rejudge judge's cells run in (one per judge, appended to the run's stage ledger). */
export function rejudgeStageName(judge: string): string {
  return `rejudge ${judge}`;
}

/** True for the stages `rejudgeStageName` names. */
export function isRejudgeStage(stage: string): boolean {
  return stage.startsWith('rejudge ');
}

export interface RejudgePlan {
  /** The probe answers judged: done probe cells with text, in plan order. */
  answers: number;
  /** One stage per judge, in the order given. */
  stages: Array<{ judge: string; stage: string; items: ParsedItem<number>[] }>;
}

/**
 * Plans one judge cell per stored probe answer (status done, non-null text) and judge. `judges`
 * must be new to the run: a judge of the run's own judge stage already scored these answers.
 */
export function planRejudge(
  config: PersonaConfig,
  judgeRubric: string | undefined,
  cells: readonly StoredTargetCell[],
  judges: readonly string[],
  runId: string,
): RejudgePlan {
  if (judges.length === 0) throw new ConfigError('name at least one judge to score the run with', { field: '--judge' });
  const unique = [...new Set(judges)];
  const own = unique.filter((judge) => config.judges.includes(judge));
  if (own.length > 0) {
    throw new ConfigError(`${own.join(', ')} already judged run ${runId} (its judges: ${config.judges.join(', ')}); name another judge`, { field: '--judge' });
  }
  const targets = cells.filter((cell) => isPersonaTargetCell(cell.labels));
  const answers = targets.filter((cell) => cell.labels.surface === 'probe' && cell.status === 'done' && cell.text !== null);
  if (answers.length === 0) throw new ConfigError(`run ${runId} has no stored probe answers to judge`, { field: 'run' });
  const procedure = personaProcedure(config);
  const judgeTexts = { ...(judgeRubric !== undefined ? { judgeRubric } : {}), procedure };
  const parseJudge = judgeParser(procedure.judgeParse);
  // The run's units, from all its target cells (as the judge stage takes them from the whole plan).
  const unitOf = personaUnitOf(targets.map((cell) => ({ request: { model: '', messages: [], params: {}, sample: 0 }, labels: cell.labels })));
  const items: Array<{ judge: string; item: ParsedItem<number>; unit: string }> = [];
  for (const answer of answers) {
    for (const judge of unique) {
      const spec = planJudgeCell(config, judge, answer.key, answer.labels, answer.text as string, 0, undefined, judgeTexts);
      items.push({ judge, unit: unitOf(answer.labels), item: judgeItem(spec, parseJudge) });
    }
  }
  // As in the run's own judge stage.
  separateJudgeDraws(
    items.map((entry) => entry.item),
    items.map((entry) => entry.unit),
  );
  return {
    answers: answers.length,
    stages: unique.map((judge) => ({
      judge,
      stage: rejudgeStageName(judge),
      items: items.filter((entry) => entry.judge === judge).map((entry) => entry.item),
    })),
  };
}
