import { isObject } from '../core/guards.js';
import { KNOWN_META_TYPES } from './claude.js';
import { dagTypeCode } from './claude-records.js';
import { KNOWN_KINDS, RESPONSE_ITEM_TYPES } from './codex.js';

/**
 * Whether one parsed line is a record of a Claude Code or Codex CLI transcript, in any
 * era. Used to refuse files that are not transcripts at all (a `package.json`, a README)
 * instead of reading them as a Claude transcript full of warnings: a `"type"` field alone
 * is not enough, the record must carry a type one of the tools writes or the envelope
 * fields they put on every line.
 */
export function isTranscriptRecord(value: unknown): boolean {
  if (!isObject(value)) return false;
  const type = value.type;
  if (typeof type === 'string') {
    // Codex: an envelope `{timestamp, type, payload}`.
    if (isObject(value.payload) && (KNOWN_KINDS.has(type) || typeof value.timestamp === 'string')) return true;
    // Codex before Sep 2025: bare response items.
    if (RESPONSE_ITEM_TYPES.has(type)) return true;
    // Claude Code: conversation records and the metadata lines it writes.
    if (dagTypeCode(type) !== 0 || KNOWN_META_TYPES.has(type)) return true;
    return typeof value.sessionId === 'string' || typeof value.uuid === 'string' || 'parentUuid' in value;
  }
  // Codex before Sep 2025: the bare session header and state lines.
  if (value.record_type === 'state') return true;
  return typeof value.id === 'string' && ('instructions' in value || typeof value.timestamp === 'string');
}
