import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { type IdSpan, spansOf } from './nordic-ids.js';

/**
 * Phone numbers written in a country's national form, without a country code (pii.ts, kind
 * `phones`): a trunk 0 or a bracketed area code, then groups of digits with spaces or dashes
 * (Australian `04nn nnn nnn`, British `020 nnnn nnnn`, Brazilian `(nn) nnnnn-nnnn`, Japanese
 * `090-nnnn-nnnn`). Read against the US plan
 * alone, as the international pass does, these are not numbers; here each candidate is tried
 * against the plans of the countries a transcript most often holds and kept when one of them
 * holds it valid. The written shape (groups and separators) is required, so a bare digit run in
 * code is not read; a US-shaped `NNN-NNN-NNNN` is kept even when its area code is not allocated
 * (555 and other fictitious ranges still stand for someone's number in a transcript).
 */

const REGIONS: readonly CountryCode[] = [
  'GB',
  'DE',
  'FR',
  'AU',
  'IN',
  'BR',
  'JP',
  'IT',
  'ES',
  'NL',
  'IE',
  'NZ',
  'ZA',
  'MX',
  'SE',
  'NO',
  'DK',
  'FI',
  'PL',
  'CH',
  'AT',
  'BE',
  'PT',
  'CN',
  'KR',
  'TR',
  'NG',
  'KE',
  'AR',
  'CO',
  'PH',
  'ID',
  'MY',
  'SG',
  'TH',
  'VN',
  'PK',
  'EG',
  'IL',
];

/** A trunk 0 (or a bracketed area code), then two to five groups of digits joined by spaces or dashes. */
const NATIONAL = /(?<![\w+.,:/@#=-]|\d[ -])(?:\(0?\d{1,4}\)|0\d{1,5})(?:[ -]{1,2}\d{2,8}){1,5}(?![\w-]|[.,:]\d| \d)/gu;
/** A US number written in its usual shape with any area code. */
const US_SHAPE = /(?<![\w+.,:/@#=-]|\d[ -])(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[-.])[2-9]\d{2}[-.]\d{4}(?![\w-]|[.,:]\d)/gu;

/** A French number written with dots (0n.nn.nn.nn.nn): five pairs, the first with the trunk 0. */
const FR_DOTTED = /(?<![\w.,:/@#=-])0[1-9](?:\.\d{2}){4}(?![\w.-])/gu;

export function nationalPhoneSpans(text: string): IdSpan[] {
  if (!/\d[ .-]\d/u.test(text)) return [];
  const national = (m: RegExpExecArray) => {
    const digits = m[0].replace(/\D/gu, '');
    if (digits.length < 8 || digits.length > 12 || digits.startsWith('00') || /^0?(\d)\1+$/u.test(digits)) return false;
    return REGIONS.some((region) => parsePhoneNumberFromString(m[0], region)?.isValid() === true);
  };
  // (Dots join version numbers and decimals too: US_SHAPE takes only the full three-three-four shape.)
  return [...spansOf(text, NATIONAL, national), ...spansOf(text, FR_DOTTED), ...spansOf(text, US_SHAPE)];
}
