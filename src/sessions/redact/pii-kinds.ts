/**
 * The kinds of personal data the redactor knows (pii.ts finds them), apart from the detector so that
 * a command parsing `--pii` loads no NLP lexicon until it redacts.
 */
export const PII_KINDS = ['names', 'phones', 'addresses', 'ips', 'cards', 'ids', 'ibans'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

/** `--pii` value: `all` (default), `none`, or a comma list of kinds; throws naming a bad one. */
export function parsePiiKinds(value: string | undefined): Set<PiiKind> {
  if (value === undefined || value.trim() === 'all') return new Set(PII_KINDS);
  if (value.trim() === 'none' || value.trim() === '') return new Set();
  const out = new Set<PiiKind>();
  for (const part of value.split(',').map((p) => p.trim())) {
    if (!(PII_KINDS as readonly string[]).includes(part)) throw new Error(`unknown kind "${part}": use all, none or a list of ${PII_KINDS.join(', ')}`);
    out.add(part as PiiKind);
  }
  return out;
}
