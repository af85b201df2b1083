import type { ModelRequest, ToolDefinition } from '../models/types.js';
import type { Session } from '../sessions/types.js';
import { separateUnitDraws } from '../store/draw-units.js';
import type { CellSpec } from '../store/types.js';
import { armMessages, buildArms, CONTINUATION_SYSTEM_PROMPT, type CutpointArms, windowCharsOf } from './arms.js';
import { DEFAULT_DECODING, type ContinuationConfig } from './config.js';
import { type Cutpoint, type CutpointStrategy, selectCutpoints } from './cutpoints.js';
import { loadTaskOverrides, type TaskSegment, taskAt, taskSegments, windowTask } from './tasks.js';
import { loadToolSchemaFile, reconstructTools } from './tools.js';
import { CONTINUATION_MATERIALS_FILE, type ContinuationMaterials, materialsConflicts } from './materials.js';

/**
 * The continuation plan (pure given the sessions and the optional files): cutpoints, their
 * arms and task strata, the tools, and one cell per target × cutpoint × arm × sample.
 */

export const CONTINUATION_EXPERIMENT = 'continuation';

export interface PlannedCutpoint {
  id: string;
  end: number;
  line: number;
  fraction: number;
  groundTruth: Cutpoint['groundTruth'];
  /** Task of the ground-truth call and of the recent window; same-task when equal. */
  task: string;
  windowTask: string | null;
  sameTask: boolean | null;
  chars: Record<string, number>;
  notes: string[];
  /** With `crossSessions`: the donor transcript of this cutpoint's cross window (donors taken in turn). */
  crossDonor?: string;
}

export interface ContinuationPlan {
  cutpoints: PlannedCutpoint[];
  arms: CutpointArms[];
  tools: ToolDefinition[];
  toolSource: string;
  skippedTools: string[];
  tasks: TaskSegment[];
  taskSource: 'heuristic' | 'file';
  specs: CellSpec[];
  notes: string[];
}

export function planContinuation(
  config: ContinuationConfig,
  session: Session,
  cross: Session | undefined,
  materials: ContinuationMaterials | null = null,
  crosses: readonly Session[] = [],
): ContinuationPlan {
  const cuts = selectCutpoints(session, {
    count: config.cutpoints.count,
    strategy: config.cutpoints.strategy as CutpointStrategy,
    skipFirst: config.cutpoints.skipFirst,
  });
  const reconstructed = reconstructTools(session);
  // A tool file of the config wins over the authors' TOOLS, which win over the transcript's.
  const tools = config.tools ? loadToolSchemaFile(config.tools) : (materials?.tools ?? reconstructed.tools);
  const tasks = config.tasks ? loadTaskOverrides(config.tasks) : taskSegments(session, { minPromptChars: config.minPromptChars });
  const windowChars = windowCharsOf(config.windowTokens);
  const systemPrompt = config.systemPrompt ?? materials?.systemPrompt ?? CONTINUATION_SYSTEM_PROMPT;
  const notes: string[] = [...materialsConflicts(config, materials)];
  if (!cross && crosses.length === 0 && config.arms.includes('cross'))
    notes.push('no cross session: the cross arm is a window of the same session, half a session away');
  if (reconstructed.skipped.length > 0 && !config.tools && !materials?.tools)
    notes.push(`tools left out (names providers refuse): ${reconstructed.skipped.join(', ')}`);
  // Several donors: cutpoints take them in turn (timeline order), so each donor covers the session evenly.
  const donorOf = (c: number): Session | undefined => (crosses.length > 0 ? crosses[c % crosses.length] : cross);
  if (crosses.length > 0)
    notes.push(`cross arm from ${crosses.length} donor transcripts taken in turn; the donor is a unit of every contrast with the cross arm`);
  const allArms = cuts.map((cut, c) =>
    buildArms(session, cut, donorOf(c), {
      windowChars,
      toolPayloadChars: config.toolTruncate,
      seed: config.seed,
      ...(materials?.acknowledgement ? { acknowledgement: materials.acknowledgement } : {}),
    }),
  );
  const cutpoints = allArms.map(({ cutpoint, arms }, c): PlannedCutpoint => {
    const task = taskAt(tasks, cutpoint.end);
    const recentTask = windowTask(tasks, arms.recent.includedMessages) ?? null;
    return {
      id: cutpoint.id,
      end: cutpoint.end,
      line: cutpoint.line,
      fraction: cutpoint.fraction,
      groundTruth: cutpoint.groundTruth,
      task,
      windowTask: recentTask,
      sameTask: recentTask === null ? null : recentTask === task,
      chars: Object.fromEntries(Object.values(arms).map((a) => [a.arm, a.chars])),
      notes: [...new Set(Object.values(arms).flatMap((a) => a.notes))],
      ...(crosses.length > 0 ? { crossDonor: (donorOf(c) as Session).file } : {}),
    };
  });
  const params: ModelRequest['params'] = {
    temperature: config.decoding.temperature ?? DEFAULT_DECODING.temperature,
    maxTokens: config.decoding.maxTokens ?? DEFAULT_DECODING.maxTokens,
    ...(config.decoding.seed === undefined ? {} : { seed: config.decoding.seed }),
  };
  const specs: CellSpec[] = [];
  for (const target of config.targets) {
    allArms.forEach((arms, c) => {
      const planned = cutpoints[c]!;
      for (const arm of config.arms) {
        specs.push({
          request: {
            model: target,
            messages: armMessages(arms, arm, systemPrompt),
            params,
            sample: 0,
            tools,
            toolChoice: config.toolChoice,
          },
          labels: {
            experiment: CONTINUATION_EXPERIMENT,
            stage: 'target',
            target,
            cutpoint: planned.id,
            arm,
            sample: 0,
            task: planned.task,
            sameTask: planned.sameTask,
          },
        });
      }
    });
  }
  // Cutpoints are the units of inference: a request planned at two cutpoints (the same cross
  // window, an empty context) is drawn once per cutpoint, never shared (docs/statistics.md).
  const separated = separateUnitDraws(specs, (spec) => String(spec.labels.cutpoint));
  if (separated.sharedRequests > 0) {
    notes.push(
      `${separated.sharedRequests} request(s) arose at more than one cutpoint: each cutpoint got its own draw (${separated.saltedCells} cells), so no two cutpoints share a cached answer`,
    );
  }
  return {
    cutpoints,
    arms: allArms,
    tools,
    toolSource: config.tools ?? (materials?.tools ? `materials:${CONTINUATION_MATERIALS_FILE} TOOLS` : 'reconstructed from the transcript'),
    skippedTools: reconstructed.skipped,
    tasks,
    taskSource: config.tasks ? 'file' : 'heuristic',
    specs: separated.specs,
    notes,
  };
}
