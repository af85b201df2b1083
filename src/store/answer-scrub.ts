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
  const scrubbed = scrubSecretShapes(values).text;
  return responseRedaction === undefined ? scrubbed : responseRedaction(scrubbed);
}

let responseRedaction: ((text: string) => string) | undefined;

/**
 * Sets (or, with undefined, clears) a further redaction every answer goes through before any store
 * of this process writes it: `redactResponses: true` in an audit config sets the personal-data
 * redaction for the run (run-audit.ts), so answers, and the archives exported from them, hold
 * `<PERSON>`, `<PHONE>`, … instead.
 */
export function setResponseRedaction(redact: ((text: string) => string) | undefined): void {
  responseRedaction = redact;
}
