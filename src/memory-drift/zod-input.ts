import type { z } from 'zod';
import { InputError } from '../core/errors.js';

/**
 * `value` parsed by a zod schema; on failure an InputError at the first issue, its path as the
 * field (`root` when the issue is on the value itself) and `fallback` when it has no message.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: { file: string; line?: number; root?: string; prefix?: string; fallback: string },
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? where.root : issue.path.map(String).join('.');
  const at = where.line === undefined ? { file: where.file, field } : { file: where.file, line: where.line, field };
  throw new InputError(`${where.prefix ?? ''}${issue?.message ?? where.fallback}`, at);
}
