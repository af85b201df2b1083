// One worker process of bench/pg-workers.bench.ts and bench/pg-latency.bench.ts: the work loop
// of `echolens worker` with an in-process fake model of fixed latency. Prints "ready" once
// connected; SIGTERM stops it. With BENCH_TRACE=1 it prints on stderr, when it stops, how its
// call slots were used: the first call's start, the last call's end (ms after the first
// claim's cells arrived) and the slot-seconds idle in between.
import { performance } from 'node:perf_hooks';
import { workCells } from '../src/execution/worker.js';
import { PgRunStore } from '../src/store/postgres/pg-store.js';
import { FakeModels } from '../src/store/testing/fakes.js';

const [url, concurrency, latency] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const store = await PgRunStore.connect(url);
const models = new FakeModels({ delayMs: latency });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
process.stdout.write('ready\n');
const trace = { first: 0, last: 0, busy: 0, calls: 0, at: 0, inFlight: 0 };
const onInFlight = (inFlight: number) => {
  const t = performance.now();
  if (trace.first === 0) trace.first = t;
  trace.busy += trace.inFlight * (t - trace.at);
  if (inFlight > trace.inFlight) trace.calls += 1;
  trace.at = t;
  trace.inFlight = inFlight;
  trace.last = t;
};
await workCells(store, { concurrency, pollMs: 20, adapterFor: models.adapterFor, costOf: () => 0, signal: stop.signal, onInFlight });
await store.close();
if (process.env.BENCH_TRACE === '1') {
  const span = trace.last - trace.first;
  process.stderr.write(
    `  worker ${process.pid}: ${trace.calls} calls in ${span.toFixed(0)} ms, slots idle ${((concurrency * span - trace.busy) / 1000).toFixed(2)} slot-s (${(100 - (100 * trace.busy) / (concurrency * span)).toFixed(0)}%)\n`,
  );
}
