/**
 * The first object key that appears twice in one object of a JSON text (which JSON.parse accepts,
 * keeping the last), or null. Meant for text JSON.parse already accepted, but bounded on any text:
 * one pass over it (an unterminated string ends the scan instead of running past the end), and
 * iterative, so nesting depth costs no stack.
 */
export function duplicateKey(text: string): string | null {
  const frames: Array<{ keys: Set<string> | null; expectKey: boolean }> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') frames.push({ keys: new Set(), expectKey: true });
    else if (c === '[') frames.push({ keys: null, expectKey: false });
    else if (c === '}' || c === ']') frames.pop();
    else if (c === ',') {
      const top = frames[frames.length - 1];
      if (top?.keys) top.expectKey = true;
    } else if (c === '"') {
      const end = closingQuote(text, i);
      if (end < 0) return null; // not JSON: JSON.parse is the judge of that
      const top = frames[frames.length - 1];
      if (top?.keys && top.expectKey) {
        const key = keyText(text.slice(i, end + 1));
        if (key === null) return null;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
  return null;
}

/** The index of the quote closing the string that opens at `open`, or -1 when the text ends first. */
function closingQuote(text: string, open: number): number {
  for (let end = open + 1; end < text.length; end++) {
    if (text[end] === '\\') end++;
    else if (text[end] === '"') return end;
  }
  return -1;
}

function keyText(quoted: string): string | null {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return null;
  }
}
