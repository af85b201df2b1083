import type { z } from 'zod';
import { InputError } from '../core/errors.js';
import type { CellLabels } from '../store/types.js';

/**
 * Validated reading of cell labels. Labels are written by an audit's plan and
 * read back from the store by its collect step; a decoder checks them against
 * a schema once, so the rest of the code holds typed values instead of casts,
 * and a store written by another version fails with the cell and label named.
 */

export type LabelDecoder<T> = (labels: CellLabels, cellKey: string) => T;

/**
 * `accepts` (optional) is a plain check a report can afford for every one of a paper-scale run's
 * cells: labels it accepts are returned as they are, without the schema's parse (so with any key
 * the schema does not name, which the schema would have dropped: read the decoded labels by field,
 * never by iterating their keys). It must accept only labels the schema accepts; anything else
 * goes through the schema as before, which names what is wrong.
 */
export function labelDecoder<T>(schema: z.ZodType<T>, what: string, accepts?: (labels: CellLabels) => boolean): LabelDecoder<T> {
  return (labels, cellKey) => {
    if (accepts?.(labels) === true) return labels as T;
    const parsed = schema.safeParse(labels);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') ?? '';
    throw new InputError(`${what} cell ${cellKey.slice(0, 12)}: label ${field ? `"${field}" ` : ''}${issue?.message ?? 'is invalid'}`, {
      field: `labels${field ? `.${field}` : ''}`,
    });
  };
}
