// Public API of the transcript redaction and its independent verifier.
export { Redactor, redactText, redactJsonLine, rewriteJsonStrings } from './redactor.js';
export type { RedactOptions, RedactedText, RedactedLine } from './redactor.js';
export { redactFile, assertDistinctOutput, assertPlainOutputName } from './redact-file.js';
export type { RedactFileOptions, RedactionReport } from './redact-file.js';
export { parseIdentityTerm, IDENTITY_CLASSES, IDENTITY_PLACEHOLDER } from './identity.js';
export type { IdentityClass, IdentityTerm } from './identity.js';
export { parseQuoteFile, MIN_QUOTE_LENGTH } from './quotes.js';
export { verifyFile } from './verify/verify-file.js';
export type { VerifyOptions, VerifyReport, Residual } from './verify/verify-file.js';
export { scanText as scanForResiduals } from './verify/scan.js';
export { maskedPreview } from './verify/mask.js';
