import { nextTurn } from '../core/next-turn.js';
import { didYouMean } from '../core/suggest.js';
import { ModelCallError } from './errors.js';
import { promptTokens } from './prompt-tokens.js';
import { getSimProfile, listSimProfiles, type SimProfile } from './sim-registry.js';
import { countTokens, TOKEN_SLICE_CHARS } from './token-count.js';
import { type ModelAdapter, type ModelRequest, type ModelResponse, ZERO_USAGE } from './types.js';

/**
 * `sim:<profile>`: answers come from a registered simulation profile, a pure
 * function of the request and a seed. Nothing is measured. Usage figures are
 * o200k_base token counts of the prompt text and the answer (an approximation:
 * no chat template, no real tokenizer of any model); latency is 0.
 */
export class SimAdapter implements ModelAdapter {
  readonly ref: string;
  readonly provider = 'sim';
  readonly modelId: string;

  constructor(ref: string, profileName: string) {
    this.ref = ref;
    this.modelId = profileName;
    // Fail early on a typo; the profile is looked up again per call.
    resolveProfile(profileName);
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const profile = resolveProfile(this.modelId);
    const seed = simSeedOf(request);
    // A long prompt (a server calling a sim labeler with a megabyte of steps) is answered in a turn
    // of its own: not in the one that stored the call (the run store's steps settle at once), nor
    // in the one counting its first token slice (each takes milliseconds to tens of ms there).
    const promptChars = request.messages.reduce((n, m) => n + m.content.length, Math.max(0, request.messages.length - 1));
    const long = promptChars > TOKEN_SLICE_CHARS;
    if (long) await nextTurn();
    const answer = profile.answer(request, seed);
    if (long) await nextTurn();
    const reasoningTokens = answer.reasoning === undefined ? 0 : countTokens(answer.reasoning);
    // Counted where the prompt was built when it was (a reward server's worker), else here in slices
    // with yields between them, so the thread stays responsive (prompt-tokens.ts: the same count).
    const inputTokens = await promptTokens(request.messages);
    const response: ModelResponse = {
      text: answer.text,
      finishReason: 'stop',
      usage: { ...ZERO_USAGE, inputTokens, outputTokens: countTokens(answer.text) + reasoningTokens, reasoningTokens },
      latencyMs: 0,
      responseModel: `sim:${profile.name}`,
    };
    if (answer.reasoning !== undefined) response.reasoning = answer.reasoning;
    if (answer.toolCalls !== undefined && answer.toolCalls.length > 0) {
      response.toolCalls = answer.toolCalls;
      response.finishReason = 'tool-calls';
      response.usage.outputTokens += countTokens(JSON.stringify(answer.toolCalls));
    }
    if (answer.text.trim() === '' && response.toolCalls === undefined) {
      throw new ModelCallError('empty', `sim:${profile.name}: the simulated answer is empty`, { provider: 'sim', response });
    }
    return response;
  }
}

function resolveProfile(name: string): SimProfile {
  const profile = getSimProfile(name);
  if (profile === undefined) {
    const known = listSimProfiles().map((p) => p.name);
    throw new ModelCallError(
      'not_found',
      `sim: no simulation profile "${name}"${didYouMean(name, known)}; registered profiles: ${known.length === 0 ? '(none)' : known.join(', ')}`,
      { provider: 'sim' },
    );
  }
  return profile;
}

/**
 * The seed a profile sees for a request: `deriveSimSeed` of its seed and sample, mixed with its
 * draw unit when it has one, so the same request drawn for two units gets two draws (as a
 * real model at temperature > 0 would give).
 */
export function simSeedOf(request: Pick<ModelRequest, 'params' | 'sample' | 'unit'>): number {
  const seed = deriveSimSeed(request.params.seed ?? 0, request.sample);
  if (request.unit === undefined) return seed;
  // FNV-1a of the unit, folded into the seed.
  let h = 0x811c9dc5;
  for (let i = 0; i < request.unit.length; i += 1) h = Math.imul(h ^ request.unit.charCodeAt(i), 0x01000193) >>> 0;
  return deriveSimSeed(seed ^ h, request.sample);
}

/**
 * The seed a profile sees: a 32-bit mix of the request seed and the sample
 * index, so k samples of one request differ and each is reproducible.
 */
export function deriveSimSeed(seed: number, sample: number): number {
  let h = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = (h + Math.imul(Math.trunc(sample) + 1, 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0x27d4eb2f) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
