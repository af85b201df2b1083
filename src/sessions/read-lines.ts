import { InputError } from '../core/errors.js';
import { DEFAULT_MAX_LINE_BYTES, type LineSink, LineSplitter } from './line-splitter.js';
import type { TextEncodingName } from './redact/text-encoding.js';
import { isZstdPath, transcriptBytes } from './transcript-bytes.js';

export { isZstdPath };

export interface ReadLinesOptions {
  maxLineBytes?: number;
  chunkBytes?: number;
}

export interface ReadLinesResult {
  lines: number;
  /** Bytes seen after decompression and decoding (UTF-8). */
  bytes: number;
  encoding: TextEncodingName;
}

/**
 * Streams a `.jsonl` or `.jsonl.zst` file line by line into `sink`. Memory stays at
 * one chunk plus the longest line. Bytes come through `transcriptBytes`, the decode step
 * every reader shares: an unopenable file, a corrupt zstd stream, binary data or a NUL
 * byte is an InputError naming the file (never a warning and a shorter transcript).
 */
export async function readFileLines(file: string, sink: LineSink, options: ReadLinesOptions = {}): Promise<ReadLinesResult> {
  const splitter = new LineSplitter(sink, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  let encoding: TextEncodingName = 'utf-8';
  const onEncoding = (found: TextEncodingName) => {
    encoding = found;
  };
  try {
    for await (const chunk of transcriptBytes(file, { chunkBytes: options.chunkBytes ?? 1024 * 1024, onEncoding })) splitter.push(chunk);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read transcript (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { file }, { cause: error });
  }
  splitter.end();
  return { lines: splitter.lines, bytes: splitter.totalBytes, encoding };
}
