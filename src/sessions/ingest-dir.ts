import { join } from 'node:path';

/** Where `sessions ingest` copies transcripts by default (apart from ingest.ts, which loads the transcript parsers). */
export const DEFAULT_INGEST_DIR = join('.echolens', 'sessions');
