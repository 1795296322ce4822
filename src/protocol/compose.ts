// compose, the text side: edits of a document that change only their bytes (edits.ts), and the
// versions and all-or-none writes of documents under the scene's folder (main/documents.ts).

export { applyEdits, validateEditItem, EditError, EDIT_KINDS } from './edits.js';
export type { EditItem } from './edits.js';
export { versionOf, resolveUnder, PathError, JOURNAL_NAME } from '../main/documents.js';
export { writeDocuments } from '../main/journal.js';
export { recoverJournal } from '../main/journal-recovery.js';
export type { WriteOptions } from '../main/journal.js';
