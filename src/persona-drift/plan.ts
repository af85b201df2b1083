import type { ChatMessage, DecodingParams } from '../models/types.js';
import type { CellLabels, CellSpec } from '../store/types.js';
import type { PersonaConfig } from './config.js';
import { framingLevels, type PersonaProcedure, resolveSystemPrompt } from './config.js';
import { assembleProbeMessages, type Intervention } from './interventions.js';
import { buildJudgeMessages } from './judge.js';
import { type AnchorVariant, anchorVariants } from './anchor-ablation.js';
import type { PersonaStimuli } from './stimuli.js';
import { probeText } from './stimuli.js';

/**
 * The ContextEcho plan, pure: the same config and the same sessions give the
 * same cells in the same order. Target cells come first; judge cells are
 * planned from finished target cells (`planJudgeCells`).
 */

export type ContextArm = PersonaConfig['arms'][number];

export interface PlannedPosition {
  label: string;
  /** Value on the configured counter. */
  value: number;
  compaction?: { index: number; side: 'pre' | 'post' };
  /** Every selector label that chose this probed context, when more than one did. */
  selectedBy?: readonly string[];
}

/** How much of the requested continuation the session had after a position. */
export interface ContinuationInfo {
  /** Timeline messages replayed after the position. */
  timelineMessages: number;
  /** Assistant messages among them (the unit `distances[].messages` counts). */
  assistantMessages: number;
  requested: number;
  /** Why fewer were replayed: the session ended, or a compaction replaced the context. */
  clipped: null | 'session end' | `compaction C${number}`;
}

/** What the plan needs from one session (built by the sessions module at the edge). */
export interface SessionPlanInput {
  id: string;
  positions: readonly PlannedPosition[];
  /** The context arm's messages at a position (prefix + acknowledgement; empty for scratch). */
  context(position: PlannedPosition, arm: ContextArm): ChatMessage[];
  /** Up to `messages` real model-visible messages that followed the position, as turns. */
  continuation(position: PlannedPosition, messages: number): ChatMessage[];
  /** What the continuation holds and whether it was clipped (optional for hand-built inputs). */
  continuationInfo?(position: PlannedPosition, messages: number): ContinuationInfo;
  /** The session's opening goal (for goal re-injection). */
  goal?: string;
}

export interface PlannedItem {
  surface: 'probe' | 'stressor' | 'contract';
  item: string;
  category: string;
  paraphrase: number;
  /** The text sent as the final user turn. */
  request: string;
  /** What the judge is shown (bare probe), probe surface only. */
  bareProbe?: string;
  /** Whether the benchmark framing preceded the probe (probe surface only). */
  framed?: boolean;
}

export function plannedItems(config: PersonaConfig, stimuli: PersonaStimuli): PlannedItem[] {
  const items: PlannedItem[] = [];
  const { probes, framing, paraphrases } = stimuli.probes;
  // Framing is a design factor when both levels are listed (App. S): each probe is planned once per level.
  const levels = framingLevels(config);
  const wanted = probes
    .filter((probe) => config.probes.categories.includes(probe.category) || config.probes.ids.includes(probe.id))
    .map((probe) => ({
      id: probe.id,
      category: probe.category,
      variants: [probe.text, ...(paraphrases[probe.id] ?? []).filter((text) => text !== probe.text)].slice(0, config.probes.paraphrases),
    }));
  // Negative controls are asked in their one wording.
  const controls = config.probes.negativeControls
    ? stimuli.probes.negativeControls.map((control) => ({ id: control.id, category: 'negative_control', variants: [control.text] }))
    : [];
  for (const { id, category, variants } of [...wanted, ...controls]) {
    variants.forEach((text, paraphrase) => {
      for (const framed of levels) {
        items.push({ surface: 'probe', item: id, category, paraphrase, request: probeText(framing, text, framed), bareProbe: text, framed });
      }
    });
  }
  for (const id of config.stressors.ids) {
    const stressor = stimuli.stressors.find((s) => s.id === id);
    stressor?.prompts.slice(0, config.stressors.paraphrases).forEach((prompt, paraphrase) => {
      items.push({ surface: 'stressor', item: id, category: id, paraphrase, request: prompt });
    });
  }
  for (const id of config.contracts) {
    const contract = stimuli.contracts.find((c) => c.id === id);
    if (contract) items.push({ surface: 'contract', item: id, category: id, paraphrase: 0, request: contract.prompt });
  }
  return items;
}

function decodingFor(config: PersonaConfig, item: PlannedItem): DecodingParams {
  return { ...config.decoding, maxTokens: item.surface !== 'probe' ? config.stressorMaxTokens : (config.decoding.maxTokens ?? 600) };
}

/** Marks the end of the shared context so providers with prompt caching can reuse it. */
function withCacheBreakpoint(context: readonly ChatMessage[]): ChatMessage[] {
  if (context.length === 0) return [];
  const copy = context.map((m) => ({ ...m }));
  (copy[copy.length - 1] as ChatMessage).cacheBreakpoint = true;
  return copy;
}

/** What the plan takes from the materials and procedure besides the stimuli (all optional: echolens's texts). */
export interface PlanTexts {
  /** System prompts by name (the authors' when their materials are used). */
  systemPrompts?: Readonly<Record<string, string>>;
  /** Stressor cells use this system prompt (by name) instead of the systemPrompts list. */
  stressorSystemPrompt?: string | null;
}

/** One inserted-turns level of the real arm: an intervention, or a cell of the anchor-ablation grid. */
interface Insertion {
  mitigation: Intervention;
  label: string;
  distances: PersonaConfig['distances'];
  variant?: AnchorVariant;
}

export function planTargetCells(config: PersonaConfig, stimuli: PersonaStimuli, sessions: readonly SessionPlanInput[], texts: PlanTexts = {}): CellSpec[] {
  const items = plannedItems(config, stimuli);
  const stressorPrompt = texts.stressorSystemPrompt ?? null;
  const ablations = config.anchorAblation ? anchorVariants(config.anchorAblation, stimuli.interventions) : [];
  const cells: CellSpec[] = [];
  for (const session of sessions) {
    for (const position of session.positions) {
      for (const arm of config.arms) {
        const context = withCacheBreakpoint(session.context(position, arm));
        // The real arm gets every intervention at every distance, and the anchor-ablation grid at the headline distance.
        const insertions: Insertion[] =
          arm === 'real'
            ? [
                ...config.mitigations.map((mitigation) => ({ mitigation, label: mitigation as string, distances: config.distances })),
                ...ablations.map((variant) => ({ mitigation: variant.arm, label: variant.label, distances: config.distances.slice(0, 1), variant })),
              ]
            : [{ mitigation: 'none', label: 'none', distances: config.distances.slice(0, 1) }];
        for (const { mitigation, label, distances, variant } of insertions) {
          if (mitigation === 'goal' && !session.goal) continue;
          for (const distance of distances) {
            const continuation = distance.messages > 0 ? session.continuation(position, distance.messages) : [];
            const info = distance.messages > 0 ? session.continuationInfo?.(position, distance.messages) : undefined;
            for (const [promptIndex, listedPrompt] of config.systemPrompts.entries()) {
              for (const item of items) {
                // A stressor system prompt replaces the list: its cells are planned once.
                const ownPrompt = item.surface === 'stressor' && stressorPrompt !== null;
                if (ownPrompt && promptIndex > 0) continue;
                const systemPromptName = ownPrompt ? stressorPrompt : listedPrompt;
                const system = resolveSystemPrompt(systemPromptName, texts.systemPrompts);
                const messages = assembleProbeMessages({
                  system: system || undefined,
                  context,
                  mitigation,
                  texts: stimuli.interventions,
                  goal: session.goal,
                  decay: variant ? variant.turns : mitigation === 'none' ? 0 : config.decay,
                  ...(variant ? { insertion: variant.insertion, placement: variant.placement } : {}),
                  continuation,
                  cadence: config.cadence ?? undefined,
                  request: item.request,
                });
                for (const target of config.targets) {
                  for (let sample = 0; sample < config.samples; sample++) {
                    const labels: CellLabels = {
                      experiment: 'persona',
                      stage: 'target',
                      session: session.id,
                      position: position.label,
                      positionValue: position.value,
                      selectedBy: position.selectedBy ? position.selectedBy.join(',') : null,
                      continuationMessages: info ? info.timelineMessages : null,
                      continuationClipped: info ? info.clipped : null,
                      compactionIndex: position.compaction?.index ?? null,
                      compactionSide: position.compaction?.side ?? null,
                      arm,
                      mitigation: label,
                      ...(variant
                        ? {
                            anchorArm: variant.arm,
                            anchorSize: variant.size,
                            anchorTokens: variant.tokens,
                            anchorPlacement: variant.placement,
                            anchorTurns: variant.turns,
                          }
                        : {}),
                      distance: distance.name,
                      surface: item.surface,
                      item: item.item,
                      category: item.category,
                      paraphrase: item.paraphrase,
                      sample,
                      target,
                      systemPrompt: systemPromptName,
                      framed: item.surface === 'probe' ? (item.framed ?? true) : null,
                      bareProbe: item.bareProbe ?? null,
                    };
                    cells.push({
                      request: { model: target, messages, params: decodingFor(config, item), sample },
                      labels,
                    });
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return cells;
}

/** A judge call for one answered probe cell; `previous` carries re-ask history (docs/decisions.md#d2). */
export function planJudgeCell(
  config: PersonaConfig,
  judge: string,
  targetKey: string,
  targetLabels: CellLabels,
  response: string,
  attempt = 0,
  previous?: ChatMessage[],
  texts: { judgeRubric?: string; procedure?: Pick<PersonaProcedure, 'judgeTemperature'> } = {},
): CellSpec {
  const messages = previous ?? buildJudgeMessages(String(targetLabels.bareProbe ?? ''), response, texts.judgeRubric);
  const params: DecodingParams = { ...config.judgeDecoding };
  // The reference calls its judge without a temperature: the provider's default applies.
  if (texts.procedure?.judgeTemperature === 'api-default') delete params.temperature;
  return {
    request: { model: judge, messages, params, sample: 0 },
    labels: {
      experiment: 'persona',
      stage: 'judge',
      judge,
      targetKey,
      attempt,
    },
  };
}
