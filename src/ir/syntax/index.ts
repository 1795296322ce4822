// The lossless parser of `.esn` documents.

export { parseDocument, parseUncached, forgetParsed } from './document.js';
export { print } from './print.js';
export { LineIndex, positionAt } from './position.js';
export { FORMS, RESERVED_WORDS, STATEMENT_KEYWORDS, PART_KEYWORDS, isReserved, form } from './forms.js';
export type { Form, FormKind, ReservedWord, ReservedRole } from './forms.js';
export { closest, editDistance } from '../suggest.js';
export type * from './tree.js';
