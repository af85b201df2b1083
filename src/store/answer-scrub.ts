import { scrubSecretShapes } from '../sessions/redact/answer-secrets.js';
import { scrubSecrets } from './keys.js';

/**
 * What a store writes for a model's answer (text or reasoning): the values of secret environment
 * variables (as for requests) and anything of a secret's shape (`sk-…`, `ghp_…`, `AKIA…`,
 * `password=…`) replaced, so that a key a model echoes from its context is never stored or shown.
 */
export function scrubAnswer(text: string | null, secrets: readonly string[]): string | null {
  if (text === null || text === '') return text;
  const values = secrets.length === 0 ? text : (scrubSecrets(text, secrets) as string);
  return scrubSecretShapes(values).text;
}
