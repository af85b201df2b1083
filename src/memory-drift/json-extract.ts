/**
 * Finds top-level JSON objects embedded in model output (prose, code fences).
 * Parsers accept the output only when exactly one object is present, so a
 * model that hedges with two candidate answers is not silently resolved.
 */
export type JsonObjectSearch =
  | { kind: 'none' }
  | { kind: 'one'; value: Record<string, unknown>; start: number; end: number }
  | { kind: 'many'; count: number };

/** Index just past the `}` that closes the `{` at `start`, or -1. */
function matchBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') depth += 1;
    else if (ch === '}') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

export function findJsonObjects(text: string): JsonObjectSearch {
  const found: { value: Record<string, unknown>; start: number; end: number }[] = [];
  let i = text.indexOf('{');
  while (i !== -1) {
    const end = matchBrace(text, i);
    let parsed: unknown;
    let ok = false;
    if (end !== -1) {
      try {
        parsed = JSON.parse(text.slice(i, end));
        ok = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
      } catch {
        ok = false;
      }
    }
    if (ok) {
      found.push({ value: parsed as Record<string, unknown>, start: i, end });
      i = text.indexOf('{', end);
    } else {
      i = text.indexOf('{', i + 1);
    }
  }
  if (found.length === 0) return { kind: 'none' };
  if (found.length > 1) return { kind: 'many', count: found.length };
  const only = found[0]!;
  return { kind: 'one', value: only.value, start: only.start, end: only.end };
}
