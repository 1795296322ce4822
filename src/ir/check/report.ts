// Diagnostics in the document's own lines and columns.

import { LineIndex } from '../syntax/position.js';
import type { Diagnostic, Document, FixEdit, Span } from '../syntax/tree.js';

const indexes = new WeakMap<Document, LineIndex>();

function lineIndex(doc: Document): LineIndex {
  let index = indexes.get(doc);
  if (!index) indexes.set(doc, (index = new LineIndex(doc.text)));
  return index;
}

export function diagnostic(doc: Document, span: Span, message: string, fix?: FixEdit): Diagnostic {
  const { line, column } = lineIndex(doc).positionAt(span.start);
  const d: Diagnostic = { severity: 'error', message, path: doc.path, span: { start: span.start, end: span.end }, line, column }; // a span, not the node it came from
  if (fix) d.fix = fix;
  return d;
}

/** `path:line:column: message` — the form editors and terminals link. */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.path}:${d.line}:${d.column}: ${d.severity}: ${d.message}`;
}
