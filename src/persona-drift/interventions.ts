import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import type { InterventionTexts } from './stimuli.js';

/**
 * Interventions (ContextEcho §2.5 and the intervention appendix; docs/decisions.md#d19–#d20): turns inserted
 * between the session prefix and the probe at prompt time. "Mitigation" is kept for the memory audit's
 * training-time tooling (src/memory-drift/mitigation/); the config key `mitigations`, the cell label
 * `mitigation` and the report fields keep their recorded names (docs/decisions.md#naming).
 */
export const INTERVENTIONS = [
  'none',
  'a-anchor',
  'a-anchor-reference',
  'v0',
  'v2',
  'long-anchor',
  'placebo_anchor',
  'placebo_iso_notes',
  'placebo_iso_recipe',
  'goal',
  'sandwich',
] as const;
export type Intervention = (typeof INTERVENTIONS)[number];

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** The sandwich reminder: the anchor's instruction sentence without the demo announcement. */
export function sandwichReminder(texts: InterventionTexts): string {
  return `${texts.v0} ${texts.bashRule}`;
}

/** Turns a mitigation inserts right before the probe (empty for `none`). */
export function insertionTurns(mitigation: Intervention, texts: InterventionTexts, goal?: string): ChatMessage[] {
  const ack = texts.acknowledgement;
  const demo = [user(texts.demoRequest), assistant(texts.demoAnswer)];
  switch (mitigation) {
    case 'none':
      return [];
    case 'a-anchor':
      return [user(texts.anchorUser ?? `${texts.v0} ${texts.bashRule} ${texts.demoAnnouncement}`), assistant(ack), ...demo];
    case 'a-anchor-reference':
      return [user(texts.anchorUser ?? `${texts.v0} ${texts.bashRuleReference} ${texts.demoAnnouncement}`), assistant(ack), ...demo];
    case 'v0':
      return [user(texts.v0), assistant(ack)];
    case 'v2':
      return [user(texts.v2Reminder), assistant(texts.v2Acknowledgement), ...(texts.v2Demo ? [user(texts.v2Demo[0]), assistant(texts.v2Demo[1])] : demo)];
    case 'long-anchor':
      return [user(texts.longAnchor), assistant(ack), ...demo];
    case 'placebo_anchor':
    case 'placebo_iso_notes':
    case 'placebo_iso_recipe': {
      const placebo = texts.placebos[mitigation];
      return [user(placebo.reminder), assistant(ack), user(placebo.demoRequest), assistant(placebo.demoAnswer)];
    }
    case 'goal': {
      if (goal === undefined || goal.trim() === '') {
        throw new InvalidArgumentError('goal', 'goal re-injection needs the session goal text');
      }
      return [user(texts.goalReinjection.replace('{goal}', goal.trim())), assistant(ack)];
    }
    case 'sandwich':
      return [user(sandwichReminder(texts)), assistant(ack)];
  }
}

export interface ProbeMessagesInput {
  system?: string;
  /** The context arm's messages (prefix + acknowledgement turn, or empty for scratch). */
  context: readonly ChatMessage[];
  mitigation: Intervention;
  texts: InterventionTexts;
  goal?: string;
  /** Anchor decay: this many generic filler exchanges after the inserted turns. */
  decay?: number;
  /** Distance: real session messages replayed after the insertion (d0 = none, far = +N). */
  continuation?: readonly ChatMessage[];
  /** Cadence-N: re-insert the turns before every N-message chunk of the continuation. */
  cadence?: number;
  /** The final user turn (framed probe, stressor or contract prompt). */
  request: string;
  /** Turns to insert instead of the mitigation's own (anchor ablations: a resized anchor). */
  insertion?: readonly ChatMessage[];
  /** Where the inserted turns go: before the probe (default), at the session start, or both. */
  placement?: 'before-probe' | 'session-start' | 'both';
}

/** Full message list for one probe cell. Adjacent same-role turns are merged so roles alternate. */
export function assembleProbeMessages(input: ProbeMessagesInput): ChatMessage[] {
  const { texts } = input;
  const decay = input.decay ?? 0;
  if (!Number.isInteger(decay) || decay < 0 || decay > texts.decayExchanges.length) {
    throw new InvalidArgumentError('decay', `must be an integer in 0..${texts.decayExchanges.length}`);
  }
  if (input.cadence !== undefined && (!Number.isInteger(input.cadence) || input.cadence < 1)) {
    throw new InvalidArgumentError('cadence', 'must be a positive integer');
  }
  const turns = input.insertion ? [...input.insertion] : input.mitigation === 'sandwich' ? [] : insertionTurns(input.mitigation, texts, input.goal);
  const placement = input.placement ?? 'before-probe';
  const inserted = placement === 'session-start' ? [] : turns;
  const out: ChatMessage[] = [];
  if (input.system) out.push({ role: 'system', content: input.system });
  if (input.mitigation === 'sandwich') out.push(...insertionTurns('sandwich', texts));
  if (placement !== 'before-probe') out.push(...turns);
  out.push(...input.context);
  out.push(...inserted);
  for (let i = 0; i < decay; i++) {
    const exchange = texts.decayExchanges[i] as [string, string];
    out.push(user(exchange[0]), assistant(exchange[1]));
  }
  const continuation = input.continuation ?? [];
  if (input.cadence !== undefined && inserted.length > 0) {
    for (let start = 0; start < continuation.length; start += input.cadence) {
      if (start > 0) out.push(...inserted);
      out.push(...continuation.slice(start, start + input.cadence));
    }
  } else {
    out.push(...continuation);
  }
  if (input.mitigation === 'sandwich') out.push(...insertionTurns('sandwich', texts));
  out.push(user(input.request));
  return mergeAdjacentRoles(out);
}

/**
 * Merges consecutive messages with the same role (providers such as Anthropic require alternation).
 * A message that needs no change is the caller's own object, not a copy: a grid's cells then
 * share their session prefix by reference (one copy in memory, hashed and stored once).
 */
export function mergeAdjacentRoles(messages: readonly ChatMessage[]): ChatMessage[] {
  const merged: ChatMessage[] = [];
  for (const message of messages) {
    const last = merged[merged.length - 1];
    if (last && last.role === message.role && message.role !== 'system') {
      merged[merged.length - 1] = {
        ...last,
        content: `${last.content}\n\n${message.content}`,
        cacheBreakpoint: last.cacheBreakpoint || message.cacheBreakpoint ? true : undefined,
      };
    } else {
      merged.push(message);
    }
  }
  return merged.map((message) => (message.cacheBreakpoint || isBare(message) ? message : { role: message.role, content: message.content }));
}

/** Only role and content: nothing to strip. */
function isBare(message: ChatMessage): boolean {
  for (const name in message) if (name !== 'role' && name !== 'content') return false;
  return true;
}
