/**
 * The CPU-bound half of a reward-server request, pure and synchronous: parse the JSON body,
 * check its shape, and for every item segment the response into steps and score its label-free
 * parts (format, readability, diversity). The server runs it in a worker thread
 * (reward-worker.ts) so that none of it blocks the thread answering `/health`.
 */
import { createHash } from 'node:crypto';
import { isObject } from '../../core/guards.js';
import type { ChatMessage } from '../../models/types.js';
import { extractSteps } from '../steps.js';
import { type LabelPromptSetup, type PreparedLabel, prepareLabel } from './reward-label-prompt.js';
import { questionIdFromLabel, type RewardWeights, referenceFromLabel, textComponents } from './reward.js';

/** A refused request: HTTP status and reason. */
export class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type RewardRoute = '/score' | '/verl' | '/openrlhf';

export interface RequestItem {
  questionId: string | null;
  response: string;
  reference?: readonly string[];
  error?: string;
}

/** The label-free parts of R. */
export type TextComponents = ReturnType<typeof textComponents>;

/**
 * One item ready for labelling: `steps` and `text` are null when the response is over the length
 * cap; `steps` is only their number when there are more than `maxSteps` (it will not be labelled).
 */
export interface PreparedItem extends RequestItem {
  steps: string[] | number | null;
  text: TextComponents | null;
}

/**
 * A prepared item as the server labels and scores it: the response itself replaced by a key for
 * the labeler's cache; its steps may come already rendered into the labeller's request.
 */
export type KeyedItem = Omit<PreparedItem, 'response' | 'steps'> & { key: string; steps: PreparedItem['steps'] | PreparedLabel };

/** `single`: /verl was sent one object (not a batch). */
export type PreparedRequest = ReturnType<typeof prepareRequest>;

export interface PrepareLimits {
  maxItems: number;
  maxResponseChars: number;
  /** Most steps labelled for one response (CachedLabeler.maxSteps). */
  maxSteps: number;
  weights: RewardWeights;
}

function stringArray(value: unknown, name: string, length?: number): string[] {
  if (!Array.isArray(value)) throw new BadRequest(400, `"${name}" must be an array`);
  if (length !== undefined && value.length !== length) throw new BadRequest(400, `"${name}" has ${value.length} entries, "query" has ${length}`);
  const bad = value.findIndex((v) => typeof v !== 'string');
  if (bad >= 0) throw new BadRequest(400, `"${name}[${bad}]" must be a string`);
  return value as string[];
}

/**
 * OpenRLHF's remote RM sends the full text (prompt + response) in `query`; the response is the
 * part after `prompts[i]` when the query starts with it, else the whole query.
 */
export function responseFromQuery(query: string, prompt: string | undefined): string {
  return prompt !== undefined && prompt !== '' && query.startsWith(prompt) ? query.slice(prompt.length) : query;
}

function verlItems(body: unknown): { items: RequestItem[]; single: boolean } {
  const batch = isObject(body) ? body.batch : undefined;
  const list: unknown[] | null = Array.isArray(body) ? body : Array.isArray(batch) ? batch : null;
  return {
    single: list === null,
    items: (list ?? [body]).map((entry, i) => {
      if (entry === null || typeof entry !== 'object') throw new BadRequest(400, `item ${i} must be an object`);
      const e = entry as Record<string, unknown>;
      if (typeof e.solution_str !== 'string') throw new BadRequest(400, `item ${i}: "solution_str" must be a string`);
      const extraId = isObject(e.extra_info) ? questionIdFromLabel(e.extra_info) : null;
      // Two label formats: a question id (string or { question_id }), or the reference trajectory itself.
      const inline = referenceFromLabel(e.ground_truth);
      if (inline !== null) return { questionId: extraId, response: e.solution_str, reference: inline };
      return { questionId: questionIdFromLabel(e.ground_truth) ?? extraId, response: e.solution_str };
    }),
  };
}

function openrlhfItems(body: unknown): RequestItem[] {
  if (!isObject(body)) throw new BadRequest(400, 'expected {"query": [...], "prompts": [...], "labels": [...]}');
  const query = stringArray(body.query, 'query');
  const prompts = body.prompts === undefined ? [] : stringArray(body.prompts, 'prompts', query.length);
  const labels = body.labels;
  if (!Array.isArray(labels) || labels.length !== query.length) {
    throw new BadRequest(400, `"labels" must be an array of ${query.length} question ids (one per query)`);
  }
  return query.map((q, i) => {
    const questionId = questionIdFromLabel(labels[i]);
    const prompt = prompts[i];
    // A prompt that does not start the query leaves the response boundary unknown: flagged, not guessed.
    if (prompt !== undefined && prompt !== '' && !q.startsWith(prompt)) {
      return { questionId, response: q, error: `query ${i} does not start with prompts[${i}]: the response cannot be separated from the prompt` };
    }
    const inline = referenceFromLabel(labels[i]);
    return { questionId, response: responseFromQuery(q, prompt), ...(inline !== null ? { reference: inline } : {}) };
  });
}

/** The request's items, checked (throws BadRequest for a malformed body or too many items). */
export function parseRequest(route: RewardRoute, bytes: Uint8Array, maxItems: number): { single: boolean; items: RequestItem[] } {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    throw new BadRequest(400, `body is not JSON (${(error as Error).message})`);
  }
  const lists = Array.isArray(body) ? [body] : isObject(body) ? [body.items, body.batch, body.query] : [];
  const itemCount = Math.max(0, ...lists.map((list) => (Array.isArray(list) ? list.length : 0)));
  if (itemCount > maxItems) throw new BadRequest(413, `${itemCount} items in one request; at most ${maxItems}`);
  if (route === '/score') {
    const items = (body as { items?: unknown } | null)?.items;
    if (!Array.isArray(items)) throw new BadRequest(400, 'expected {"items": [{"question_id": string, "response": string}, …]}');
    return {
      single: false,
      items: items.map((item, i) => {
        const it = item as { question_id?: unknown; response?: unknown } | null;
        if (it === null || typeof it !== 'object' || typeof it.response !== 'string') throw new BadRequest(400, `items[${i}].response must be a string`);
        return { questionId: questionIdFromLabel(it.question_id), response: it.response };
      }),
    };
  }
  if (route === '/verl') return verlItems(body);
  return { single: false, items: openrlhfItems(body) };
}

/** Steps and label-free components of one item (none for a response over the cap: it is never scored). */
export function prepareItem(item: RequestItem, limits: Omit<PrepareLimits, 'maxItems'>): PreparedItem {
  if (item.response.length > limits.maxResponseChars) return { ...item, steps: null, text: null };
  const steps = extractSteps(item.response).steps.filter((s) => s.trim() !== '');
  // Thousands of steps are refused unlabelled: their number is enough (and cheaper to send back).
  return { ...item, steps: steps.length > limits.maxSteps ? steps.length : steps, text: textComponents(item.response, limits.weights) };
}

/** parseRequest + prepareItem for every item: all of a request's CPU work except labelling. */
export function prepareRequest(route: RewardRoute, bytes: Uint8Array, limits: PrepareLimits) {
  const { single, items } = parseRequest(route, bytes, limits.maxItems);
  return { route, single, items: items.map((item) => prepareItem(item, limits)) };
}

/**
 * A prepared request as the worker sends it back: no response texts (copying megabytes of strings
 * into the server's thread blocks it for tens of ms), only a key per response (its SHA-256, for the
 * labeler's cache); the steps of every item as JSON in one transferred byte buffer, decoded item by
 * item (reward-pool.ts). With a labeller setup, an item with steps to label carries its labeller
 * request instead (`label`: its messages' roles and their contents' places in the buffer, the step
 * count and the run store's hashes), built and hashed in the worker (reward-label-prompt.ts), and
 * no steps: the server's thread never builds, hashes or holds them.
 */
export interface WirePreparedRequest {
  route: RewardRoute;
  single: boolean;
  items: (Omit<PreparedItem, 'response' | 'steps'> & {
    key: string;
    steps: [start: number, end: number] | number | null;
    label?: WireLabel;
  })[];
  steps: Uint8Array;
}

export interface WireLabel extends Omit<PreparedLabel, 'messages'> {
  messages: { role: ChatMessage['role']; content: TextPlace }[];
}

/**
 * Where a labeller message's text sits in the buffer: its runs in order, each latin1 when every
 * UTF-16 unit of it is at most 0xFF, else UTF-16LE (aligned). Each is decoded by a copy on the
 * server's thread; decoding a megabyte of UTF-8 that holds one non-ASCII character (the labeller
 * prompt's "…" after its steps) held that thread for 12–19 ms. Only the wide runs take two bytes a
 * unit, so the buffer stays about the UTF-8 size. The string is the worker's, unit for unit. (A run of
 * an item's steps as JSON is utf8.)
 */
export type TextPlace = [start: number, end: number, encoding: 'latin1' | 'utf16le' | 'utf8'][];

/** The text at `place` in `buffer` (see TextPlace). */
export function textAt(buffer: Uint8Array, place: TextPlace): string {
  let text = '';
  for (const [start, end, encoding] of place) text += Buffer.from(buffer.buffer, buffer.byteOffset + start, end - start).toString(encoding);
  return text;
}

export function toWire(prepared: PreparedRequest, setup?: LabelPromptSetup): WirePreparedRequest {
  const parts: Buffer[] = [];
  let at = 0;
  const placeRun = <E extends 'latin1' | 'utf16le' | 'utf8'>(text: string, encoding: E): [number, number, E] => {
    if (encoding === 'utf16le' && at % 2 === 1) {
      parts.push(Buffer.alloc(1));
      at += 1;
    }
    const bytes = Buffer.from(text, encoding);
    parts.push(bytes);
    at += bytes.length;
    return [at - bytes.length, at, encoding];
  };
  const placeText = (text: string): TextPlace => {
    const runs: TextPlace = [];
    let from = 0;
    for (const wide of text.matchAll(/[^\u0000-\u00ff]+/gu)) {
      if (wide.index > from) runs.push(placeRun(text.slice(from, wide.index), 'latin1'));
      runs.push(placeRun(wide[0], 'utf16le'));
      from = wide.index + wide[0].length;
    }
    if (from < text.length || runs.length === 0) runs.push(placeRun(text.slice(from), 'latin1'));
    return runs;
  };
  const items = prepared.items.map(({ response, steps, ...rest }) => {
    const key = `sha256:${createHash('sha256').update(response).digest('hex')}`;
    if (steps === null || typeof steps === 'number') return { ...rest, key, steps };
    if (setup !== undefined && steps.length > 0) {
      const { messages, ...label } = prepareLabel(steps, setup);
      return { ...rest, key, steps: null, label: { ...label, messages: messages.map((m) => ({ role: m.role, content: placeText(m.content) })) } };
    }
    const [start, end] = placeRun(JSON.stringify(steps), 'utf8');
    return { ...rest, key, steps: [start, end] as [number, number] };
  });
  // A buffer of its own (never Node's shared pool) so that it can be transferred.
  const steps = new Uint8Array(at);
  let offset = 0;
  for (const part of parts) {
    steps.set(part, offset);
    offset += part.length;
  }
  return { route: prepared.route, single: prepared.single, items, steps };
}
