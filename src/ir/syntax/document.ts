// parseDocument: the whole text as statements and the trivia between them.

import type { Diagnostic, Document, Statement, Trivia } from './tree.js';
import { Parser } from './parser.js';
import { parseStatement } from './statement.js';
import { positionAt } from './position.js';

/**
 * Parse one `.esn` document. Never throws: what is wrong is in `diagnostics` (1-based lines and
 * columns of the document), a statement that failed to parse is left out of `statements` and
 * kept in `items` as a `broken` trivia item, and `items` always tile `text`.
 */
export function parseDocument(path: string, text: string): { doc: Document; diagnostics: Diagnostic[] } {
  const source = typeof text === 'string' ? text : String(text ?? '');
  const key = `${path}\0${source}`;
  let parsed = recent.get(key);
  if (parsed) {
    recent.delete(key);
  } else {
    parsed = parseOnce(path, source);
    recentChars += key.length;
  }
  recent.set(key, parsed);
  // The least recently used go, past RECENT documents or RECENT_CHARS of text.
  for (const [k] of recent) {
    if (recent.size <= RECENT && recentChars <= RECENT_CHARS) break;
    recent.delete(k);
    recentChars -= k.length;
  }
  return { doc: parsed.doc, diagnostics: [...parsed.diagnostics] };
}

/**
 * The last documents parsed, by path and text, least recently used first. A compose parsed the
 * document it changed four times (its edits applied, the kernels it declares, the scene's
 * documents listed, the scene checked) and each tier swap parsed the scene again: ~2 ms each for
 * the straight corpus scene. A Document is never changed once parsed.
 */
const recent = new Map<string, { doc: Document; diagnostics: Diagnostic[] }>();
const RECENT = 32;
const RECENT_CHARS = 1 << 20;
let recentChars = 0;

/** Parse without the cache of recent documents, reading or filling it (the coordinator's warm-up: main/warm-up.ts). */
export function parseUncached(path: string, text: string): { doc: Document; diagnostics: Diagnostic[] } {
  return parseOnce(path, text);
}

/** Forget the documents parsed (a benchmark timing the parser). */
export function forgetParsed(): void {
  recent.clear();
  recentChars = 0;
}

function parseOnce(path: string, source: string): { doc: Document; diagnostics: Diagnostic[] } {
  try {
    return parse(path, source);
  } catch (e) {
    // A bug of the parser must not take the session down: keep the text, say what happened.
    const { line, column } = positionAt(source, 0);
    const message = `internal parser error: ${e instanceof Error ? e.message : String(e)}`;
    const items: Trivia[] = source.length ? [{ kind: 'trivia', span: { start: 0, end: source.length }, broken: {} }] : [];
    return {
      doc: { path, text: source, items, statements: [] },
      diagnostics: [{ severity: 'error', message, path, span: { start: 0, end: 0 }, line, column }],
    };
  }
}

function parse(path: string, text: string): { doc: Document; diagnostics: Diagnostic[] } {
  const p = new Parser(path, text);
  const items: (Statement | Trivia)[] = [];
  const statements: Statement[] = [];
  let pos = 0;
  for (;;) {
    const tok = p.tok;
    if (tok.start > pos) items.push({ kind: 'trivia', span: { start: pos, end: tok.start } });
    if (tok.type === 'eof') break;
    const item = parseStatement(p);
    items.push(item);
    if (item.kind !== 'trivia') statements.push(item);
    pos = item.span.end;
  }
  const diagnostics = p.diagnostics.slice().sort((a, b) => a.span.start - b.span.start);
  return { doc: { path, text, items, statements }, diagnostics };
}
