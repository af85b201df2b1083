import { createAdapter } from '../../models/create-adapter.js';
import { type FakeRequest, type FakeServer, startFakeOpenAI } from '../../models/testing/index.js';
import type { ChatMessage } from '../../models/types.js';

export interface SimWireServerOptions {
  /** The `sim:` model that answers the judge (or labeler) requests. */
  judge: string;
  /** Whether a request's messages are a judge (or labeler) prompt. */
  isJudge(messages: ChatMessage[]): boolean;
  /** The target's answer to any other request. */
  target(messages: ChatMessage[], request: FakeRequest): string;
}

/**
 * For end-to-end tests over the wire: a local OpenAI-compatible server whose answers come from
 * simulated models, the judge's from a `sim:` adapter and the target's from the given function.
 */
export function startSimWireServer(options: SimWireServerOptions): Promise<FakeServer> {
  const judge = createAdapter(options.judge);
  return startFakeOpenAI({
    respond: async (request) => {
      const messages = (request.body?.messages ?? []) as ChatMessage[];
      if (options.isJudge(messages)) {
        const r = await judge.generate({ model: options.judge, messages, params: {}, sample: 0 });
        return { text: r.text };
      }
      return { text: options.target(messages, request) };
    },
  });
}
