/**
 * Worker thread of the reward server (reward-pool.ts): receives a request body and answers its
 * prepared items (prepareRequest, sent as toWire), or the refusal as { status, message }.
 */
import { parentPort } from 'node:worker_threads';
import { BadRequest, type PrepareLimits, prepareRequest, type RewardRoute, toWire } from './reward-request.js';

export interface WorkerTask {
  id: number;
  route: RewardRoute;
  body: Uint8Array;
  limits: PrepareLimits;
}

parentPort?.on('message', (task: WorkerTask) => {
  try {
    const prepared = toWire(prepareRequest(task.route, task.body, task.limits));
    parentPort?.postMessage({ id: task.id, ok: true, prepared }, [prepared.steps.buffer as ArrayBuffer]);
  } catch (error) {
    const status = error instanceof BadRequest ? error.status : 500;
    parentPort?.postMessage({ id: task.id, ok: false, status, message: (error as Error).message });
  }
});
