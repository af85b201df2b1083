/**
 * The fake provider servers of bench/overhead.bench.ts, in their own process: the server's
 * CPU and memory then stay out of the measured process, as a real endpoint's would.
 *
 * Starts the fake OpenAI and Anthropic servers (src/models/testing) on 127.0.0.1 and prints
 * one JSON line with their base URLs. A model id ending in `-<n>ms` answers after n ms, so one
 * server serves every latency. The request log is emptied as it fills: the servers would
 * otherwise keep every request body.
 */
import { startFakeAnthropic } from '../src/models/testing/fake-anthropic.js';
import type { FakeRequest, FakeServer } from '../src/models/testing/fake-server.js';
import { startFakeOpenAI } from '../src/models/testing/fake-openai.js';

const ANSWER = 'A short answer of a few words, as judges and targets give.';
/** What a persona judge answers (a model id containing `judge`). */
const VERDICT = JSON.stringify({ score: 2, label: 'mostly_assistant', reason: 'answers as an assistant' });

/** Answers are numbered, so a judge stage sees distinct answers (as it would from sampled targets). */
let answered = 0;

function respondAfterDelay(server: () => FakeServer | undefined) {
  return async (request: FakeRequest) => {
    const log = server()?.requests;
    if (log !== undefined && log.length > 64) log.length = 0;
    const model = typeof request.body?.model === 'string' ? request.body.model : '';
    const delayMs = Number(/-(\d+)ms$/.exec(model)?.[1] ?? 0);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    answered += 1;
    return { text: model.includes('judge') ? VERDICT : `${ANSWER} (${answered})`, usage: { inputTokens: 1000, outputTokens: 12 } };
  };
}

let openai: FakeServer | undefined;
let anthropic: FakeServer | undefined;
openai = await startFakeOpenAI({ respond: respondAfterDelay(() => openai) });
anthropic = await startFakeAnthropic({ respond: respondAfterDelay(() => anthropic) });
process.stdout.write(`${JSON.stringify({ openai: openai.baseURL, anthropic: anthropic.baseURL })}\n`);
// Ends with its parent: stdin closes when the bench exits.
process.stdin.resume();
process.stdin.on('end', () => {
  void Promise.all([openai?.close(), anthropic?.close()]).then(() => process.exit(0));
});
