import { sha256Hex } from '../core/canonical-json.js';
import type { SimAnswer, SimProfile } from '../models/sim-registry.js';
import type { ModelRequest, ToolCall } from '../models/types.js';
import { LOREM_WORDS } from '../sessions/reference.js';
import { type Rng, rng } from '../stats/rng.js';
import type { ContinuationArm } from './arms.js';
import type { GroundTruthCall } from './cutpoints.js';
import { questionOfMessages } from './judge.js';
import { type CallStatus, wordTokens } from './scoring.js';
import { argumentsOf } from './tools.js';

/**
 * SIMULATED continuation targets for offline demos, tests and `continuation calibrate`.
 * They measure nothing about any model. A simulation cannot know what the agent did next,
 * so the planner registers each cutpoint's ground truth (keyed by the cutpoint's final user
 * message) and the recent window's fingerprint here, and the simulated target answers from
 * them: per arm it answers in prose or with an unparseable call at planted rates, otherwise
 * it copies the true call and replaces each top-level argument, with a planted probability,
 * by a wrong value of the same shape (a replaced argument scores 0, a kept one 1). The
 * expected complete-case fidelity of an arm is therefore its `keep` probability (exactly,
 * up to empty lists or objects, which are kept), and the planted gain of recent over cross
 * is keep(recent) − keep(cross) complete case, and call(recent)·keep(recent) −
 * call(cross)·keep(cross) intention to treat, with call = 1 − prose − unparseable.
 */

export interface ContinuationSimParams {
  name: string;
  description: string;
  keep: Record<ContinuationArm, number>;
  prose: Record<ContinuationArm, number>;
  unparseable: Record<ContinuationArm, number>;
}

const flat = (x: number): Record<ContinuationArm, number> => ({ scratch: x, filler: x, recent: x, cross: x });

export const CONTINUATION_SIM: ContinuationSimParams = {
  name: 'continuation',
  description: 'simulation: tool-using continuation with a planted fidelity gain of +0.30 (complete case) for the recent arm over cross',
  keep: { scratch: 0.45, filler: 0.5, recent: 0.8, cross: 0.5 },
  prose: flat(0.15),
  unparseable: flat(0.05),
};

export const CONTINUATION_NULL_SIM: ContinuationSimParams = {
  name: 'continuation-null',
  description: 'simulation: tool-using continuation with no arm effect (every arm keeps an argument with probability 0.6)',
  keep: flat(0.6),
  prose: flat(0.15),
  unparseable: flat(0.05),
};

/** The planted truth of a profile for the contrast a − b. */
export function plantedGain(params: ContinuationSimParams, a: ContinuationArm, b: ContinuationArm): { completeCase: number; itt: number } {
  const call = (arm: ContinuationArm) => 1 - params.prose[arm] - params.unparseable[arm];
  return {
    completeCase: params.keep[a] - params.keep[b],
    itt: call(a) * params.keep[a] - call(b) * params.keep[b],
  };
}

export interface SimCutpointTruth {
  truth: GroundTruthCall;
  recentFingerprint: string | null;
}

const oracle = new Map<string, SimCutpointTruth>();

function fingerprint(text: string): string {
  return sha256Hex(text).slice(0, 16);
}

/** Called by the planner: the ground truth of a cutpoint, known to the simulation only. */
export function registerSimTruth(finalUserMessage: string, truth: GroundTruthCall, recentPrefixFirstMessage: string | null): void {
  oracle.set(fingerprint(finalUserMessage), {
    truth,
    recentFingerprint: recentPrefixFirstMessage === null ? null : fingerprint(recentPrefixFirstMessage),
  });
}

/** What the simulation knows about the cutpoint a request belongs to (undefined when unregistered). */
export function simTruthFor(finalUserMessage: string): SimCutpointTruth | undefined {
  return oracle.get(fingerprint(finalUserMessage));
}

const LOREM_WORD_SET = new Set(LOREM_WORDS);

/** Which arm a request is, as the simulation sees it. */
export function armOfRequest(request: ModelRequest, known: SimCutpointTruth | undefined): ContinuationArm {
  const context = request.messages.filter((m) => m.role !== 'system').slice(0, -1);
  if (context.length === 0) return 'scratch';
  const first = context[0]!.content;
  if (known?.recentFingerprint != null && fingerprint(first) === known.recentFingerprint) return 'recent';
  const words = first.toLowerCase().match(/[a-z]+/g) ?? [];
  const lorem = words.filter((w) => LOREM_WORD_SET.has(w)).length;
  return words.length > 0 && lorem / words.length > 0.6 ? 'filler' : 'cross';
}

function wrongValue(value: unknown, random: Rng): unknown {
  if (Array.isArray(value)) return value.map((v) => wrongValue(v, random));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, wrongValue(v, random)]));
  }
  if (typeof value === 'number') return value + 7919 + random.int(1000);
  if (typeof value === 'boolean') return !value;
  return `zq${random.nextUint32().toString(36)}`;
}

/** One simulated outcome: status and, for a call, which top-level arguments are kept. */
export function drawOutcome(params: ContinuationSimParams, arm: ContinuationArm, random: Rng): { status: CallStatus; keep: (key: string) => boolean } {
  const u = random.next();
  if (u < params.prose[arm]) return { status: 'prose', keep: () => false };
  if (u < params.prose[arm] + params.unparseable[arm]) return { status: 'unparseable', keep: () => false };
  return { status: 'call', keep: () => random.next() < params.keep[arm] };
}

function seedOf(request: ModelRequest, seed: number): number {
  const digest = sha256Hex(`${seed}:${request.sample}:${JSON.stringify(request.messages)}`);
  return Number.parseInt(digest.slice(0, 12), 16);
}

export function continuationSimProfile(params: ContinuationSimParams): SimProfile {
  return {
    name: params.name,
    description: params.description,
    answer(request: ModelRequest, seed: number): SimAnswer {
      const last = request.messages.at(-1)?.content ?? '';
      const known = oracle.get(fingerprint(last));
      if (!known || request.tools === undefined) {
        return { text: 'I would look at the repository first and then decide on the next step.' };
      }
      const arm = armOfRequest(request, known);
      const random = rng(seedOf(request, seed));
      const outcome = drawOutcome(params, arm, random);
      if (outcome.status === 'prose') return { text: 'Next I would check the failing file and rerun the tests.' };
      if (outcome.status === 'unparseable') {
        return { text: '', toolCalls: [{ name: known.truth.name, input: '{"broken": ', invalid: 'unparseable' }] };
      }
      const args: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(argumentsOf(known.truth.input))) {
        args[key] = outcome.keep(key) ? value : wrongValue(value, random);
      }
      const call: ToolCall = { id: `sim_${random.nextUint32().toString(16)}`, name: known.truth.name, input: args };
      return { text: '', toolCalls: [call] };
    },
  };
}

/**
 * SIMULATED equivalence judge (`sim:continuation-judge`): calls two values equivalent when
 * their lower-cased word tokens overlap by at least half (Jaccard ≥ 0.5), so word order and
 * small edits pass and a different request does not. A stand-in for tests and demos; it
 * knows no semantics.
 */
export const CONTINUATION_JUDGE_SIM: SimProfile = {
  name: 'continuation-judge',
  description: 'SIMULATED continuation judge: "equivalent" when the two argument values share at least half their word tokens (no semantics)',
  answer(request: ModelRequest): SimAnswer {
    const question = questionOfMessages(request.messages);
    if (question === null) return { text: 'I can only compare two argument values.' };
    const a = new Set(wordTokens(question.recorded));
    const b = new Set(wordTokens(question.emitted));
    const union = new Set([...a, ...b]).size;
    const shared = [...a].filter((t) => b.has(t)).length;
    return { text: JSON.stringify({ equivalent: union === 0 || shared / union >= 0.5 }) };
  },
};

export function registerContinuationSimProfiles(register: (profile: SimProfile) => void): void {
  register(continuationSimProfile(CONTINUATION_SIM));
  register(continuationSimProfile(CONTINUATION_NULL_SIM));
  register(CONTINUATION_JUDGE_SIM);
}

export const SIM_PROFILES: readonly ContinuationSimParams[] = [CONTINUATION_SIM, CONTINUATION_NULL_SIM];
