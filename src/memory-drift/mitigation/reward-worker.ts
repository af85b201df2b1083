/**
 * Worker thread of the reward server (reward-pool.ts): receives a request body, streamed as the
 * server's thread reads it (`start`, then `chunk`s, then `end`; `abort` drops it), and answers its
 * prepared items (prepareRequest, sent as toWire: with the labeller's requests built and hashed
 * when the pool passed the labeller setup as workerData), or the refusal as { status, message }.
 * The body is assembled here, so the server's thread never allocates or copies a body-sized buffer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LabelPromptSetup } from './reward-label-prompt.js';
import { BadRequest, type PrepareLimits, prepareRequest, type RewardRoute, toWire } from './reward-request.js';
import { lowerThisThread } from './thread-priority.js';

/** `size` of a start: the declared Content-Length, if any. */
export type WorkerTask =
  | { type: 'start'; id: number; route: RewardRoute; limits: PrepareLimits; size: number | null }
  | { type: 'chunk'; id: number; chunk: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'abort'; id: number };

interface Body {
  route: RewardRoute;
  limits: PrepareLimits;
  bytes: Uint8Array;
  length: number;
}

// This thread runs at a lower priority than the server's own thread (thread-priority.ts), so on a
// machine whose cores are all busy the thread answering /health and moving bytes is scheduled first.
lowerThisThread();

const bodies = new Map<number, Body>();
/** When the pool was given the labeller's setup, each item's labeller request is built and hashed here. */
const labelPrompt = (workerData as { labelPrompt?: LabelPromptSetup } | null)?.labelPrompt;

function append(body: Body, chunk: Uint8Array): void {
  if (body.length + chunk.length > body.bytes.length) {
    // A body without (or beyond) its declared length grows by doubling; the server caps its size.
    const grown = new Uint8Array(Math.max(body.bytes.length * 2, body.length + chunk.length, 65_536));
    grown.set(body.bytes.subarray(0, body.length));
    body.bytes = grown;
  }
  body.bytes.set(chunk, body.length);
  body.length += chunk.length;
}

parentPort?.on('message', (task: WorkerTask) => {
  if (task.type === 'start') {
    bodies.set(task.id, { route: task.route, limits: task.limits, bytes: new Uint8Array(task.size ?? 65_536), length: 0 });
    return;
  }
  const body = bodies.get(task.id);
  if (body === undefined) return;
  if (task.type === 'chunk') return append(body, task.chunk);
  bodies.delete(task.id);
  if (task.type === 'abort') return;
  try {
    const prepared = toWire(prepareRequest(body.route, body.bytes.subarray(0, body.length), body.limits), labelPrompt);
    parentPort?.postMessage({ id: task.id, ok: true, prepared }, [prepared.steps.buffer as ArrayBuffer]);
  } catch (error) {
    const status = error instanceof BadRequest ? error.status : 500;
    parentPort?.postMessage({ id: task.id, ok: false, status, message: (error as Error).message });
  }
});
