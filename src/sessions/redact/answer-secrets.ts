import { redactCredentialForms } from './credentials.js';
import { type ClassCounts, joinPieces, keep, type Piece } from './pieces.js';
import { redactKeys, redactSecrets } from './secrets.js';

/**
 * The secret passes of `sessions redact` alone (provider keys and tokens of known shapes,
 * credential assignments such as `password=…` or `Authorization: Bearer …`), for text a model
 * wrote: an answer that echoes a key from its context is stored with `<SECRET:kind>` in its place.
 * Paths, names and other identifiers are left as they are (they are the answer's content; the PII
 * passes are opt-in, see `redactResponses`).
 */
export function scrubSecretShapes(text: string): { text: string; counts: ClassCounts } {
  const counts: ClassCounts = {};
  if (text.length === 0) return { text, counts };
  const lower = text.toLowerCase();
  let pieces: Piece[] = [keep(text)];
  pieces = redactKeys(pieces, counts, lower);
  pieces = redactSecrets(pieces, counts, lower);
  pieces = redactCredentialForms(pieces, counts, lower);
  return { text: Object.keys(counts).length === 0 ? text : joinPieces(pieces), counts };
}
