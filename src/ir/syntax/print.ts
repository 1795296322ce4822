// print: the document's text back from its items (which tile it), byte for byte.

import type { Document } from './tree.js';

export function print(doc: Document): string {
  let out = '';
  for (const item of doc.items) out += doc.text.slice(item.span.start, item.span.end);
  return out;
}
