// A plain text table: the first row is the heading, underlined; columns padded to their widest cell.

export function textTable(rows: string[][]): string {
  const width = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) => r.map((cell, i) => (cell ?? '').padEnd(width[i])).join('  ').trimEnd());
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  return lines.join('\n');
}
