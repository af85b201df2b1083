import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type FakeBatchOptions, type FakeBatchServer, lastUserText, startFakeBatch } from '../../models/testing/index.js';

export interface FakeBatchKit {
  /** A fake batch server answering `answer to <last user text>` unless `options.respond` says otherwise. */
  fake(options: FakeBatchOptions): Promise<FakeBatchServer>;
  /** A store file (`runs.db`) in a new temporary folder. */
  storeFile(): string;
}

/**
 * The fake batch servers and store folders of the `--batch` store tests: each test's are closed
 * and removed after it. Call once at the top of a test file (it registers an `afterEach`).
 */
export function fakeBatchKit(prefix: string): FakeBatchKit {
  let servers: FakeBatchServer[] = [];
  let dirs: string[] = [];
  afterEach(async () => {
    for (const server of servers) await server.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    servers = [];
    dirs = [];
  });
  return {
    async fake(options) {
      const server = await startFakeBatch({ respond: (request) => ({ text: `answer to ${lastUserText(request)}` }), ...options });
      servers.push(server);
      return server;
    },
    storeFile() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return join(dir, 'runs.db');
    },
  };
}
