import { open } from 'node:fs/promises';
import { Decompress } from 'fzstd';
import { InputError } from '../core/errors.js';
import { DEFAULT_MAX_LINE_BYTES, type LineSink, LineSplitter } from './line-splitter.js';

export interface ReadLinesOptions {
  maxLineBytes?: number;
  chunkBytes?: number;
}

export interface ReadLinesResult {
  lines: number;
  /** Decompressed bytes seen. */
  bytes: number;
}

export function isZstdPath(file: string): boolean {
  return file.endsWith('.zst');
}

/**
 * Streams a `.jsonl` or `.jsonl.zst` file line by line into `sink`. Memory stays at
 * one chunk plus the longest line. A missing/unreadable file is an InputError; a
 * corrupt zstd stream is a warning at the line reached, and reading stops there.
 */
export async function readFileLines(file: string, sink: LineSink, options: ReadLinesOptions = {}): Promise<ReadLinesResult> {
  const splitter = new LineSplitter(sink, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new InputError(`cannot open transcript (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { file }, { cause: error });
  }
  const zstd = isZstdPath(file);
  const decompressor = zstd ? new Decompress((data) => splitter.push(data)) : undefined;
  const buffer = Buffer.allocUnsafe(options.chunkBytes ?? 1024 * 1024);
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      if (decompressor) {
        try {
          // fzstd may keep a reference to the chunk: hand it a copy.
          decompressor.push(Uint8Array.prototype.slice.call(buffer, 0, bytesRead));
        } catch (error) {
          sink.warn(splitter.lines + 1, `corrupt zstd stream, reading stopped: ${(error as Error).message}`);
          break;
        }
      } else {
        splitter.push(buffer.subarray(0, bytesRead));
      }
    }
    if (decompressor) {
      try {
        decompressor.push(new Uint8Array(0), true);
      } catch (error) {
        sink.warn(splitter.lines + 1, `truncated zstd stream: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read transcript (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { file }, { cause: error });
  } finally {
    await handle.close();
  }
  splitter.end();
  return { lines: splitter.lines, bytes: splitter.totalBytes };
}
