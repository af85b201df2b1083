// One worker process of bench/pg-workers.bench.ts: the work loop of `echolens worker` with an
// in-process fake model of fixed latency. Prints "ready" once connected; SIGTERM stops it.
import { PgRunStore } from '../src/store/postgres/pg-store.js';
import { workCells } from '../src/execution/worker.js';
import { FakeModels } from '../src/store/testing/fakes.js';

const [url, concurrency, latency] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const store = await PgRunStore.connect(url);
const models = new FakeModels({ delayMs: latency });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
process.stdout.write('ready\n');
await workCells(store, { concurrency, pollMs: 20, adapterFor: models.adapterFor, costOf: () => 0, signal: stop.signal });
await store.close();
