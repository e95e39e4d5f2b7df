import { duplicateKey } from './json-duplicates';

describe('duplicateKey', () => {
  it.each([
    ['{"a":1,"b":2}', null],
    ['{"a":1,"a":2}', 'a'],
    ['{"repo":{"url":"x","url":"y"}}', 'url'],
    ['[{"a":1},{"a":2}]', null],
    ['{"a":"\\"a\\",\\"a\\":","b":{"a":1},"c":[{"a":1,"b":"}"}]}', null],
    ['{"\\u0061":1,"a":2}', 'a'],
    ['{"x":[1,{"k":1}],"k":2,"x":3}', 'x'],
    ['"just a string"', null],
  ])('%s -> %s', (text, expected) => {
    JSON.parse(text);
    expect(duplicateKey(text)).toBe(expected);
  });

  it('handles deep nesting without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(duplicateKey(deep)).toBeNull();
  });
});
