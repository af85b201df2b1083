import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Decompress } from 'fzstd';
import { InputError } from '../core/errors.js';
import { describeFileKind } from '../core/user-files.js';
import { type TextEncodingName, asUtf8 } from './redact/text-encoding.js';

/**
 * The one decode step every transcript reader goes through (`readSession` for list,
 * inspect, persona and continuation runs, the viewer and ingest; `redact` and `verify`
 * through the line-part reader), so a file reads the same way everywhere:
 *
 * - a name ending in `.zst` is decompressed; a corrupt or truncated stream is an
 *   InputError naming the file (a reader that stopped early would see a shorter
 *   transcript, or an empty one, and call it fine);
 * - UTF-16 and UTF-32 files (byte-order mark, or the zero-byte pattern of mostly-ASCII
 *   text) are decoded to UTF-8; a UTF-8 BOM stays and the line readers take it off;
 * - a NUL byte anywhere else (binary data, an unknown encoding) is an InputError.
 */

export function isZstdPath(file: string): boolean {
  return file.endsWith('.zst');
}

export interface TranscriptBytesOptions {
  /** Bytes read from disk at a time (default 64 KiB). */
  chunkBytes?: number;
  /** Told the encoding once it is known (after the first 4 KiB). */
  onEncoding?: (encoding: TextEncodingName) => void;
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'error';
}

/** The file's raw bytes; an unopenable or unreadable file is an InputError naming it. */
async function* diskBytes(path: string, chunkBytes: number): AsyncGenerator<Buffer> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of blocking for ever.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new InputError(`cannot open transcript (${errorCode(error)})`, { file: path }, { cause: error });
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new InputError(`cannot read transcript: ${describeFileKind(stats)}, not a regular file`, { file: path });
  }
  try {
    for (;;) {
      // A fresh buffer each time: consumers (and fzstd) may keep the chunk.
      const buffer = Buffer.allocUnsafe(chunkBytes);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, chunkBytes, null));
      } catch (error) {
        throw new InputError(`cannot read transcript (${errorCode(error)})`, { file: path }, { cause: error });
      }
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** Decompresses a zstd stream; corruption or truncation is an InputError naming the file. */
async function* zstdBytes(path: string, chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let ready: Buffer[] = [];
  let decompressedBytes = 0;
  // fzstd may reuse its output window: keep a copy of each piece.
  const decompressor = new Decompress((data) => {
    ready.push(Buffer.from(data));
    decompressedBytes += data.length;
  });
  const corrupt = (error: unknown) =>
    new InputError(
      `corrupt or truncated zstd stream after ${decompressedBytes} decompressed bytes (${error instanceof Error ? error.message : String(error)})`,
      { file: path },
      { cause: error },
    );
  for await (const chunk of chunks) {
    try {
      decompressor.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } catch (error) {
      throw corrupt(error);
    }
    const pieces = ready;
    ready = [];
    yield* pieces;
  }
  try {
    decompressor.push(new Uint8Array(0), true);
  } catch (error) {
    throw corrupt(error);
  }
  yield* ready;
}

/** A transcript file as UTF-8 bytes, chunk by chunk (see the module comment for the rules). */
export function transcriptBytes(path: string, options: TranscriptBytesOptions = {}): AsyncGenerator<Buffer> {
  const raw = diskBytes(path, options.chunkBytes ?? 1 << 16);
  return asUtf8(path, isZstdPath(path) ? zstdBytes(path, raw) : raw, options.onEncoding);
}
