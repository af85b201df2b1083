import { isObject } from './guards.js';

/**
 * Finds top-level JSON objects embedded in model output (prose, code fences).
 * Parsers accept the output only when exactly one object is present, so a
 * model that hedges with two candidate answers is not silently resolved.
 */
export type JsonObjectSearch = { kind: 'none' } | { kind: 'one'; value: Record<string, unknown>; start: number; end: number } | { kind: 'many'; count: number };

/**
 * The end (exclusive) of the JSON object or array that opens at `start`, or -1
 * when it never closes. Strings (with escapes) and nesting are respected; the
 * slice is not validated, so callers still parse it.
 */
export function jsonValueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth += 1;
    else if (ch === '}' || ch === ']') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Every top-level JSON object embedded in `text`: exactly one, several, or none. */
export function findJsonObjects(text: string): JsonObjectSearch {
  const found: { value: Record<string, unknown>; start: number; end: number }[] = [];
  let i = text.indexOf('{');
  while (i !== -1) {
    const end = jsonValueEnd(text, i);
    let parsed: unknown;
    let ok = false;
    if (end !== -1) {
      try {
        parsed = JSON.parse(text.slice(i, end));
        ok = isObject(parsed);
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
