import { transcriptBytes } from '../transcript-bytes.js';
import type { TextEncodingName } from './text-encoding.js';

/** A piece of one line; a line longer than `partBytes` arrives in several parts. */
export interface LinePart {
  /** 1-based line number. */
  line: number;
  text: string;
  /** True on the last part of the line. */
  end: boolean;
  /** `\n`, `\r\n` or `` (last line without newline); only meaningful when `end`. */
  terminator: string;
  /** The line held bytes that are not UTF-8 (decoded as U+FFFD); only meaningful when `end`. */
  invalidUtf8: boolean;
}

const NEWLINE = 10;
const CR = 13;

/**
 * Streams a file (plain, or zstd-compressed when named `*.zst`) as line parts without
 * ever holding more than ~`partBytes` of one line, decoding UTF-8 across chunk
 * boundaries; invalid bytes become U+FFFD and are flagged, never thrown. UTF-16 and
 * UTF-32 files (byte-order mark, or the zero-byte pattern of mostly-ASCII text) are
 * decoded first (`onEncoding` tells which); binary data is an InputError.
 */
export async function* readLineParts(path: string, partBytes = 1 << 20, onEncoding?: (encoding: TextEncodingName) => void): AsyncGenerator<LinePart> {
  let line = 1;
  let decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let replacementInInput = false;
  let sawReplacement = false;

  const flush = (final: boolean, terminator: string): LinePart => {
    let bytes = Buffer.concat(pending, pendingBytes);
    if (final && terminator === '\n' && bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      bytes = bytes.subarray(0, bytes.length - 1);
      terminator = '\r\n';
    }
    pending = [];
    pendingBytes = 0;
    // A U+FFFD the input spells out is no sign of bytes that were not UTF-8.
    replacementInInput ||= bytes.includes(Buffer.from([0xef, 0xbf, 0xbd]));
    const text = decoder.decode(bytes, { stream: !final });
    sawReplacement ||= text.includes('\uFFFD');
    const part: LinePart = {
      line,
      text,
      end: final,
      terminator: final ? terminator : '',
      invalidUtf8: final ? sawReplacement && !replacementInInput : false,
    };
    if (final) {
      line++;
      decoder = new TextDecoder('utf-8', { ignoreBOM: true });
      sawReplacement = false;
      replacementInInput = false;
    }
    return part;
  };

  for await (const chunk of transcriptBytes(path, onEncoding === undefined ? {} : { onEncoding })) {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        if (start < chunk.length) {
          pending.push(chunk.subarray(start));
          pendingBytes += chunk.length - start;
        }
        const last = pending[pending.length - 1];
        const endsWithCr = last !== undefined && last.length > 0 && last[last.length - 1] === CR;
        // Keep a trailing CR with the line so `\r\n` split across chunks is still seen.
        if (pendingBytes >= partBytes && !endsWithCr) yield flush(false, '');
        break;
      }
      pending.push(chunk.subarray(start, newline));
      pendingBytes += newline - start;
      yield flush(true, '\n');
      start = newline + 1;
    }
  }
  if (pendingBytes > 0) yield flush(true, '');
}
