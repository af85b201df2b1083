import { afterAll, beforeAll } from 'vitest';
import { type FakeServer, type FakeServerOptions, startFakeOpenAI } from '../../models/testing/index.js';

/**
 * A local OpenAI-compatible server for the enclosing `describe`: started before its tests and
 * closed after them. Read `.server` inside the tests; it does not exist before they run.
 */
export function suiteFakeOpenAI(options: FakeServerOptions): { readonly server: FakeServer } {
  let server: FakeServer | undefined;
  beforeAll(async () => {
    server = await startFakeOpenAI(options);
  });
  afterAll(() => server?.close());
  return {
    get server(): FakeServer {
      if (server === undefined) throw new Error('the suite server starts before the tests: read it inside a test');
      return server;
    },
  };
}
