import { createAdapter } from '../../models/create-adapter.js';
import { type FakeRequest, type FakeServer, type FakeToolCall, startFakeOpenAI } from '../../models/testing/index.js';
import type { ChatMessage } from '../../models/types.js';

export interface SimWireServerOptions {
  /** The `sim:` model that answers the judge (or labeler) requests. */
  judge: string;
  /** Whether a request is a judge (or labeler) prompt. */
  isJudge(messages: ChatMessage[], request: FakeRequest): boolean;
  /** The sample index the judge model sees; 0 unless given. */
  judgeSample?(request: FakeRequest): number;
  /** The call answering a request that offers tools (a continuation cell); without it, `target` answers those too. */
  toolCall?(request: FakeRequest): FakeToolCall;
  /** The target's answer to any other request. */
  target(messages: ChatMessage[], request: FakeRequest): string | Promise<string>;
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
      if (options.isJudge(messages, request)) {
        const r = await judge.generate({ model: options.judge, messages, params: {}, sample: options.judgeSample?.(request) ?? 0 });
        return { text: r.text };
      }
      const tools = request.body?.tools;
      if (options.toolCall !== undefined && Array.isArray(tools) && tools.length > 0) return { toolCalls: [options.toolCall(request)] };
      return { text: await options.target(messages, request) };
    },
  });
}
