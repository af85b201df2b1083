import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../core/errors.js';
import { countSessionFile } from './discover.js';
import { DEFAULT_INGEST_DIR } from './ingest-dir.js';
import { exists, findSubagentFiles } from './read.js';
import type { SummaryCache } from './summary-cache.js';
import type { SessionTool } from './types.js';

/**
 * Copies a transcript into the project's own store (Claude Code deletes transcripts
 * after 30 days). Content-addressed: `<tool>-<first 16 hex of SHA-256>.jsonl[.zst]`,
 * hashed while copying so a live, growing source is captured consistently.
 * The source is only read. Claude Code subagent files go to `<name>/subagents/`,
 * the layout the reader attaches automatically.
 */

export { DEFAULT_INGEST_DIR } from './ingest-dir.js';

export interface IngestResult {
  source: string;
  dest: string;
  tool: SessionTool;
  sha256: string;
  bytes: number;
  /** The same content was already in the store. */
  alreadyPresent: boolean;
  subagents: string[];
}

/** `cache`: the summary cache `sessions list` fills (an unchanged file is not counted again). */
export async function ingestSession(file: string, options: { into?: string; tool?: SessionTool; cache?: SummaryCache } = {}): Promise<IngestResult> {
  const into = options.into ?? DEFAULT_INGEST_DIR;
  const probe = await countSessionFile(file, { ...(options.tool ? { tool: options.tool } : {}), ...(options.cache ? { cache: options.cache } : {}) });
  await mkdir(into, { recursive: true });
  const extension = file.endsWith('.jsonl.zst') ? '.jsonl.zst' : '.jsonl';
  const temp = join(into, `.ingest-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}.tmp`);
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    await pipeline(
      createReadStream(file),
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          hash.update(chunk);
          bytes += chunk.length;
          callback(null, chunk);
        },
      }),
      createWriteStream(temp, { flags: 'wx' }),
    );
  } catch (error) {
    await rm(temp, { force: true });
    throw new InputError(`cannot copy transcript (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { file }, { cause: error });
  }
  const sha256 = hash.digest('hex');
  const stem = `${probe.tool}-${sha256.slice(0, 16)}`;
  const dest = join(into, `${stem}${extension}`);
  const alreadyPresent = await exists(dest);
  if (alreadyPresent) await rm(temp, { force: true });
  else await rename(temp, dest);
  const subagents: string[] = [];
  if (probe.tool === 'claude') {
    const found = await findSubagentFiles(file, probe.id);
    if (found.length > 0) {
      const subDir = join(into, stem, 'subagents');
      await mkdir(subDir, { recursive: true });
      for (const f of found) {
        const target = join(subDir, basename(f.file));
        await copyFile(f.file, target);
        if (f.meta) await copyFile(f.meta, join(subDir, basename(f.meta)));
        subagents.push(target);
      }
    }
  }
  if (!alreadyPresent) {
    const sidecar = {
      source: file,
      tool: probe.tool,
      sessionId: probe.id ?? null,
      sha256,
      bytes,
      ingestedAt: new Date().toISOString(),
      subagents: subagents.map((s) => basename(s)),
    };
    await writeFile(join(into, `${stem}.source.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
  }
  return { source: file, dest, tool: probe.tool, sha256, bytes, alreadyPresent, subagents };
}
