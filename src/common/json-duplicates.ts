/**
 * The first object key that appears twice in one object of a JSON text (which JSON.parse accepts,
 * keeping the last), or null. Run on text JSON.parse already accepted; iterative, so nesting depth
 * costs no stack.
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
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = frames[frames.length - 1];
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
  return null;
}
