/**
 * A small pool of worker threads running the reward server's CPU-bound work (reward-request.ts:
 * JSON parsing, step segmentation, readability and the other label-free components), so the
 * server's own thread only moves bytes and answers `/health`. One worker per request the server
 * scores at once; a worker that dies (e.g. out of memory) fails its request and is replaced.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LabelPromptSetup } from './reward-label-prompt.js';
import { BadRequest, type KeyedItem, type PrepareLimits, type RewardRoute, textAt, type WirePreparedRequest } from './reward-request.js';
import { nextTurn } from '../../core/next-turn.js';

type Reply = { id: number; ok: true; prepared: WirePreparedRequest } | { id: number; ok: false; status: number; message: string };

/**
 * The worker's entry: the compiled reward-worker.js beside this module (dist/), or, when running
 * from the TypeScript sources (tests, `tsx`), a bootstrap that loads reward-worker.ts through tsx.
 */
function workerEntry(): URL {
  const js = new URL('./reward-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return js;
  const ts = new URL('./reward-worker.ts', import.meta.url).href;
  // tsx's ES-module API (its CommonJS twin cannot be loaded from a data: URL).
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/u, '.mjs'),
  ).href;
  const source = `const api = await import(${JSON.stringify(tsx)}); await (api.tsImport ?? api.default.tsImport)(${JSON.stringify(ts)}, ${JSON.stringify(ts)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

/** A request body on its way to a worker (RewardWorkerPool.open). */
export interface BodyUpload {
  write(chunk: Uint8Array): void;
  end(): Promise<{ single: boolean; items: KeyedItem[] }>;
  abort(): void;
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

export class RewardWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Map<number, { resolve: (p: WirePreparedRequest) => void; reject: (e: unknown) => void; slot: Slot }>();
  private nextId = 0;
  private closed = false;
  private entry: URL | undefined;

  constructor(
    private readonly size: number,
    /** Heap limit of each worker, in MB (its request fails, with 503, beyond it). */
    private readonly heapMb = 256,
    /**
     * The labeller's model and ontology: given, the workers build and hash each item's labeller
     * request (its items' `steps` are then PreparedLabels) instead of sending the steps back.
     */
    private readonly labelPrompt?: LabelPromptSetup,
  ) {}

  /**
   * Runs prepareRequest in a worker on a whole body (tests, callers holding the bytes); rejects
   * with BadRequest for a refused body.
   */
  async prepare(route: RewardRoute, body: Uint8Array, limits: PrepareLimits): Promise<{ single: boolean; items: KeyedItem[] }> {
    const upload = await this.open(route, limits, body.length);
    upload.write(body);
    return upload.end();
  }

  /**
   * Starts a request in a worker and returns where its body goes: `write` each chunk as it is
   * received (copied into a buffer of its own and moved to the worker, so this thread never holds
   * or copies the whole body), then `end()` for the prepared items, or `abort()` to drop it (the
   * worker is free again). `size` is the declared Content-Length, if any.
   */
  async open(route: RewardRoute, limits: PrepareLimits, size: number | null): Promise<BodyUpload> {
    if (this.closed) throw new BadRequest(503, 'server is closing');
    const slot = await this.acquire();
    const id = this.nextId++;
    const reply = new Promise<WirePreparedRequest>((resolve, reject) => this.pending.set(id, { resolve, reject, slot }));
    // Observed by end(); a failure before then (worker died) must not be an unhandled rejection.
    reply.catch(() => undefined);
    slot.worker.ref();
    slot.worker.postMessage({ type: 'start', id, route, limits, size });
    let open = true;
    return {
      write: (chunk: Uint8Array) => {
        if (!open || !this.pending.has(id)) return;
        const copy = new Uint8Array(chunk.length);
        copy.set(chunk);
        slot.worker.postMessage({ type: 'chunk', id, chunk: copy }, [copy.buffer]);
      },
      end: async () => {
        if (open && this.pending.has(id)) slot.worker.postMessage({ type: 'end', id });
        open = false;
        return this.decode(await reply);
      },
      abort: () => {
        if (!open) return;
        open = false;
        const task = this.pending.get(id);
        if (task === undefined) return;
        this.pending.delete(id);
        slot.worker.postMessage({ type: 'abort', id });
        this.release(slot);
      },
    };
  }

  /** Each item's steps (or labeller request) decoded one item at a time, yielding in between (each is at most one response long). */
  private async decode(wire: WirePreparedRequest): Promise<{ single: boolean; items: KeyedItem[] }> {
    const items: KeyedItem[] = [];
    for (const { label, steps, ...item } of wire.items) {
      if (label !== undefined || Array.isArray(steps)) await nextTurn();
      const decoded: KeyedItem['steps'] =
        label !== undefined
          ? { ...label, messages: label.messages.map((m) => ({ role: m.role, content: textAt(wire.steps, m.content) })) }
          : Array.isArray(steps)
            ? (JSON.parse(textAt(wire.steps, [[...steps, 'utf8']])) as string[])
            : steps;
      items.push({ ...item, steps: decoded });
    }
    return { single: wire.single, items };
  }

  close(): Promise<void> {
    this.closed = true;
    for (const [id, task] of this.pending) {
      this.pending.delete(id);
      task.reject(new BadRequest(503, 'server is closing'));
    }
    const all = this.slots.splice(0).map((slot) => slot.worker.terminate());
    return Promise.all(all).then(() => undefined);
  }

  private async acquire(): Promise<Slot> {
    for (;;) {
      const slot = this.slots.find((s) => !s.busy) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (slot !== undefined) {
        slot.busy = true;
        return slot;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    slot.worker.unref();
    this.waiting.shift()?.();
  }

  private spawn(): Slot {
    this.entry ??= workerEntry();
    const worker = new Worker(this.entry, {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
      workerData: this.labelPrompt === undefined ? {} : { labelPrompt: this.labelPrompt },
    });
    const slot: Slot = { worker, busy: false };
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const task = this.pending.get(reply.id);
      if (task === undefined) return;
      this.pending.delete(reply.id);
      this.release(slot);
      if (reply.ok) task.resolve(reply.prepared);
      else task.reject(new BadRequest(reply.status, reply.message));
    });
    const fail = (error: Error) => {
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      for (const [id, task] of this.pending) {
        if (task.slot !== slot) continue;
        this.pending.delete(id);
        task.reject(new BadRequest(503, `scoring worker failed (${error.message}); retry`));
      }
      // A replacement is started by the next request; whoever waits for a slot may take one.
      this.waiting.shift()?.();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`exited with code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }
}
