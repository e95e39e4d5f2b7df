import { parseArgs } from 'node:util';
import { argumentError, parseCommandLine, UsageError, wholeNumber } from './args';

/** The message node:util parseArgs gives for these arguments. */
function parseArgsMessage(args: string[]): Error {
  try {
    parseArgs({
      args,
      strict: true,
      options: { 'cluster-name': { type: 'string' }, domain: { type: 'string' }, version: { type: 'boolean' } },
    });
  } catch (e) {
    return e as Error;
  }
  throw new Error('parseArgs accepted it');
}

describe("parseArgs's errors in a user's words", () => {
  const names = ['cluster-name', 'domain', 'version', 'infra-only'];

  it.each([
    [['--infra-onyl'], 'unknown option --infra-onyl; did you mean --infra-only?'],
    [['-V'], 'unknown option -V; did you mean --version?'],
    [['-x'], 'unknown option -x'],
    [['--domain', 'a.example', '--cluster-name'], '--cluster-name needs a value'],
    [['--cluster-name', '--domain', 'a.example'], '--cluster-name needs a value (the next word starts with "-")'],
  ])('%j -> %s', (args, expected) => {
    expect(argumentError(parseArgsMessage(args), names)).toBe(expected);
  });

  it('throws UsageErrors from the parser', () => {
    expect(() => parseCommandLine(['--nope'], { json: { type: 'boolean' } }, false)).toThrow(UsageError);
    expect(parseCommandLine(['a', '--json'], { json: { type: 'boolean' } }, true)).toMatchObject({
      values: { json: true },
      positionals: ['a'],
    });
  });
});

describe('whole numbers', () => {
  it.each([
    ['30', 0, 30],
    ['0', 0, 0],
    [undefined, 0, 7],
  ])('%s (min %d) -> %d', (value, min, expected) => {
    expect(wholeNumber('stuck-minutes', value, 7, min)).toBe(expected);
  });

  it.each([['abc'], ['1.5'], ['-3'], [''], ['1e3'], ['0x10'], ['99999999999999999']])('refuses %j', (value) => {
    expect(() => wholeNumber('from-seq', value, 1, 1)).toThrow(UsageError);
    expect(() => wholeNumber('from-seq', value, 1, 1)).toThrow(/^--from-seq must be a whole number from 1, not /);
  });

  it('refuses a number below the minimum', () => {
    expect(() => wholeNumber('limit', '0', 50, 1)).toThrow('--limit must be a whole number from 1, not "0"');
  });
});
