import fc from 'fast-check';
import { duplicateKey } from './json-duplicates';
import { parseJsonBody } from './json-body.middleware';

/** How long one parse of at most ~1 MiB may take on a busy 2-core machine: far above linear, far below "never". */
const BOUND_MS = 2000;

function timed<T>(work: () => T): { value: T; ms: number } {
  const start = process.hrtime.bigint();
  const value = work();
  return { value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

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

  // The 12-byte body that froze the service: an unterminated string ran the scan past the end forever.
  it.each(['{"abc', '"', '{"a":1,"', '{"\\', '{"a\\"', '["\\u12'])('ends on unterminated text %j', (text) => {
    const { value, ms } = timed(() => duplicateKey(text));
    expect(value).toBeNull();
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('ends in bounded time on any text, and agrees with JSON.parse on what it accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 2000 }),
          fc.json({ maxDepth: 6 }),
          fc.stringMatching(/^[{}[\]",:\\a-c0-9 ]{0,400}$/),
        ),
        (text) => {
          const { value: parsed, ms } = timed(() => parseJsonBody(text));
          expect(ms).toBeLessThan(BOUND_MS);
          let accepted = true;
          try {
            JSON.parse(text);
          } catch {
            accepted = false;
          }
          expect('value' in parsed || /appears twice/.test(parsed.error.message)).toBe(accepted);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('finds every duplicate JSON.parse would silently drop', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 8 }),
        fc.nat(),
        (obj, pick) => {
          const entries = Object.entries(obj);
          const [key] = entries[pick % entries.length];
          const body = JSON.stringify(obj);
          const doubled = `${body.slice(0, -1)},${JSON.stringify(key)}:null}`;
          expect(duplicateKey(body)).toBeNull();
          expect(duplicateKey(doubled)).toBe(key);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('stays linear on a 1 MiB adversarial body: within a small multiple of a valid 1 MiB body on the same machine', () => {
    // The baseline is measured here, so a busy machine slows both alike: a quadratic scan of 1 MiB would take minutes.
    const valid = JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`key-${i}`, i])));
    const baselineMs = Math.max(...[0, 1, 2].map(() => timed(() => parseJsonBody(valid)).ms));
    for (const text of [
      '{"' + 'a'.repeat(1024 * 1024),
      '{"a":' + '"\\\\'.repeat(300_000),
      '['.repeat(1024 * 1024),
      '{"k":1,'.repeat(150_000),
    ]) {
      const { ms } = timed(() => parseJsonBody(text));
      expect(ms).toBeLessThan(20 * baselineMs + 100);
    }
  });
});
