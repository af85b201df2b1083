/**
 * The fake batch servers of bench/batch-memory.bench.ts, in their own process (their memory holds
 * every submitted batch, which must stay out of the measured run). Starts an Anthropic and an
 * OpenAI fake batch server (src/models/testing/fake-batch.ts; request bodies dropped once answered) and prints one JSON line with their
 * base URLs; online calls to the same URLs are answered by the online fakes behind them. A model
 * id containing `judge` answers a persona verdict. Request logs are emptied as they fill.
 */
import { startFakeBatch } from '../src/models/testing/fake-batch.js';
import type { FakeRequest, FakeServer } from '../src/models/testing/fake-server.js';

const ANSWER = 'A short answer of a few words, as judges and targets give.';
const VERDICT = JSON.stringify({ score: 2, label: 'mostly_assistant', reason: 'answers as an assistant' });
let answered = 0;

function respond(online: () => FakeServer | undefined) {
  return (request: FakeRequest) => {
    const log = online()?.requests;
    if (log !== undefined && log.length > 16) log.length = 0;
    const model = typeof request.body?.model === 'string' ? request.body.model : '';
    answered += 1;
    return { text: model.includes('judge') ? VERDICT : `${ANSWER} (${answered})`, usage: { inputTokens: 80_000, outputTokens: 12 } };
  };
}

let anthropicOnline: FakeServer | undefined;
let openaiOnline: FakeServer | undefined;
const anthropic = await startFakeBatch({ provider: 'anthropic', keepBodies: false, respond: respond(() => anthropicOnline) });
const openai = await startFakeBatch({ provider: 'openai', keepBodies: false, respond: respond(() => openaiOnline) });
anthropicOnline = anthropic.online;
openaiOnline = openai.online;
process.stdout.write(`${JSON.stringify({ anthropic: anthropic.baseURL, openai: openai.baseURL })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void Promise.all([anthropic.close(), openai.close()]).then(() => process.exit(0));
});
