// Where each value of a JSON text begins, by its path (`ok.values[1].value`), so a replay's failed
// expectation can name the column of the value that failed. Run only on text JSON.parse accepted.

/** The offset of every value in `text`, by path; the whole text's value is at ''. */
export function jsonOffsets(text: string): Map<string, number> {
  const at = new Map<string, number>();
  let i = 0;
  const space = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    space();
    at.set(path, i);
    const c = text[i];
    if (c === '{') {
      i++;
      space();
      while (text[i] !== '}' && i < text.length) {
        space();
        const key = string();
        space();
        i++; // :
        value(path ? `${path}.${key}` : key);
        space();
        if (text[i] === ',') i++;
        space();
      }
      i++;
    } else if (c === '[') {
      i++;
      space();
      for (let n = 0; text[i] !== ']' && i < text.length; n++) {
        value(`${path}[${n}]`);
        space();
        if (text[i] === ',') i++;
        space();
      }
      i++;
    } else if (c === '"') {
      string();
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    }
  };
  value('');
  return at;
}
