import { execFileSync } from 'node:child_process';

/**
 * zstd bytes for tests. echolens only decompresses (fzstd), so tests compress with the
 * `zstd` command when it is installed (real compressed blocks, as Codex writes them) and
 * otherwise build a valid frame of raw (stored) blocks by hand, which every zstd decoder
 * reads; `tool` says which one made the bytes.
 */

let zstdCommand: boolean | undefined;

export function hasZstdCommand(): boolean {
  if (zstdCommand === undefined) {
    try {
      execFileSync('zstd', ['--version'], { stdio: 'ignore' });
      zstdCommand = true;
    } catch {
      zstdCommand = false;
    }
  }
  return zstdCommand;
}

export function zstdCompress(plain: Buffer): { bytes: Buffer; tool: 'zstd' | 'raw-blocks' } {
  if (hasZstdCommand()) {
    return { bytes: execFileSync('zstd', ['-q', '-c', '-3'], { input: plain, maxBuffer: 1 << 30 }), tool: 'zstd' };
  }
  return { bytes: rawZstdFrame(plain), tool: 'raw-blocks' };
}

const MAX_BLOCK = 128 * 1024;

/**
 * One zstd frame holding `plain` in raw blocks (RFC 8878 §3.1.1): magic, a single-segment
 * header with a 4-byte content size, then blocks of at most 128 KiB with 3-byte headers.
 */
export function rawZstdFrame(plain: Buffer): Buffer {
  if (plain.length > 0xffffffff) throw new RangeError('rawZstdFrame: content over 4 GiB');
  const header = Buffer.alloc(9);
  header.writeUInt32LE(0xfd2fb528, 0);
  header[4] = 0xa0; // Frame_Content_Size_flag = 2 (4 bytes), Single_Segment_flag = 1
  header.writeUInt32LE(plain.length, 5);
  const parts: Buffer[] = [header];
  let offset = 0;
  do {
    const size = Math.min(MAX_BLOCK, plain.length - offset);
    const last = offset + size >= plain.length ? 1 : 0;
    const blockHeader = Buffer.alloc(3);
    blockHeader.writeUIntLE((size << 3) | last, 0, 3); // Block_Type 0 = raw
    parts.push(blockHeader, plain.subarray(offset, offset + size));
    offset += size;
  } while (offset < plain.length);
  return Buffer.concat(parts);
}
