/**
 * The labeller's request for one response, built where the response is segmented: in the reward
 * server's worker threads (reward-worker.ts), so the server's own thread neither builds the
 * megabyte prompt nor hashes it. CachedLabeler (reward-labeler.ts) builds the same request from
 * steps when it is given no prepared one; both go through `labelerRequest`.
 */
import { countPromptTokens, primePromptTokens } from '../../models/prompt-tokens.js';
import { getProvider } from '../../models/providers.js';
import { parseModelRef } from '../../models/ref.js';
import type { ChatMessage, ModelRequest } from '../../models/types.js';
import { messageDigest, primeMessageDigest, primeRequestKeys, requestKeys } from '../../store/request-hash.js';
import { buildLabelerMessages, LABELER_DEFAULT_PARAMS } from '../labeler.js';
import type { Ontology } from '../ontology.js';

/** What a worker needs to build labeller requests (CachedLabeler.promptSetup). */
export interface LabelPromptSetup {
  /** The labeller's model reference. */
  model: string;
  ontology: Ontology;
}

/**
 * A response's labeller request, ready: its messages, the number of steps they number, and the
 * hashes the run store would compute for it (cell key, content key, each long message's digest).
 */
export interface PreparedLabel {
  stepCount: number;
  messages: ChatMessage[];
  keys: { key: string; contentKey: string; legacyKey?: string };
  /** messageDigest of each message. */
  digests: string[];
  /**
   * For a `sim:` labeller: the prompt token count it reports (models/prompt-tokens.ts), counted
   * here so that the server's thread does not run the BPE over a megabyte prompt.
   */
  promptTokens?: number;
}

/** Whether `model` is answered by a simulation (the only adapter that counts prompt tokens itself). */
function isSimModel(model: string): boolean {
  try {
    return getProvider(parseModelRef(model).provider)?.kind === 'sim';
  } catch {
    return false;
  }
}

/** The labeller cell's request for a response's steps, as rendered into `messages`. */
export function labelerRequest(model: string, messages: ChatMessage[]): ModelRequest {
  return { model, messages, params: { ...LABELER_DEFAULT_PARAMS }, sample: 0 };
}

/** Builds and hashes the labeller request for non-empty steps. */
export function prepareLabel(steps: readonly string[], setup: LabelPromptSetup): PreparedLabel {
  const messages = buildLabelerMessages(steps, setup.ontology);
  return {
    stepCount: steps.length,
    messages,
    keys: requestKeys(labelerRequest(setup.model, messages)),
    digests: messages.map((m) => messageDigest(m)),
    ...(isSimModel(setup.model) ? { promptTokens: countPromptTokens(messages) } : {}),
  };
}

/** The request of a prepared label, its hashes recorded so that the run store does not compute them again. */
export function requestOfPrepared(model: string, prepared: PreparedLabel): ModelRequest {
  const request = labelerRequest(model, prepared.messages);
  // Short messages are not cached (request-hash.ts): priming them does nothing, hashing them is cheap.
  prepared.messages.forEach((message, i) => {
    primeMessageDigest(message, prepared.digests[i]!);
  });
  primeRequestKeys(request, prepared.keys);
  if (prepared.promptTokens !== undefined) primePromptTokens(request.messages, prepared.promptTokens);
  return request;
}

export function isPreparedLabel(value: unknown): value is PreparedLabel {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && 'messages' in value && 'keys' in value;
}
