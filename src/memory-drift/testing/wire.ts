import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimWireServer } from '../../experiment/testing/sim-wire-server.js';
import type { SimProfile } from '../../models/sim-registry.js';
import type { FakeServer } from '../../models/testing/index.js';
import { readLabelerPrompt } from '../sim.js';

/**
 * A local OpenAI-compatible server for memory runs: labeler prompts are answered by
 * `sim:labeler`, every other request by `target` with the seed the request sent.
 */
export function serveSimMemory(target: SimProfile): Promise<FakeServer> {
  return startSimWireServer({
    judge: 'sim:labeler',
    isJudge: (messages) => readLabelerPrompt(messages) !== null,
    target(messages, request) {
      const seed = Number(request.body?.seed ?? 0);
      return target.answer({ model: 'wire', messages, params: { seed }, sample: 0 }, seed).text;
    },
  });
}

/**
 * Writes `<dir>/<name>.yaml`: a memory config whose target and labeler are OpenAI-compatible
 * models of the server at `baseURL`, then `lines`. Returns the file's path.
 */
export function writeWireMemoryConfig(
  dir: string,
  name: string,
  baseURL: string,
  lines: readonly string[],
  models: { target: string; labeler: string } = { target: 'fake-target', labeler: 'fake-labeler' },
): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [`targets: ["openai-compatible:${models.target}@${baseURL}"]`, `labeler: "openai-compatible:${models.labeler}@${baseURL}"`, ...lines].join('\n'),
  );
  return file;
}
