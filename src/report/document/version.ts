/** The version of the result document's shape; a change that removes or renames a field bumps it. */
export const RESULT_DOCUMENT_SCHEMA = 'echolens.result/2';
