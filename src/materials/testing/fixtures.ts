import { join } from 'node:path';

/** Small clones written for echolens tests: the reference repositories' layout with placeholder texts. */
export const CONTEXTECHO_FIXTURE = join(import.meta.dirname, '..', '__fixtures__', 'ContextEcho');
export const DRIFTLENS_FIXTURE = join(import.meta.dirname, '..', '__fixtures__', 'DriftLens');
