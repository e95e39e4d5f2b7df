import fc from 'fast-check';
import { formatLogLine, parseLogEntry } from './run-log-store';

describe('run log entries', () => {
  it('are one line whatever a message holds: line breaks, C1 controls and bidi overrides are shown escaped', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({ unit: 'binary', maxLength: 20 }),
        (msg, step) => {
          const line = formatLogLine({ time: '2026-01-01T00:00:00.000Z', level: 'info', step, msg });
          // eslint-disable-next-line no-control-regex -- the point: no control character may survive
          expect(line).not.toMatch(/[\n\r\u0085\u2028\u2029\u202e\u001b]/);
          expect(line.startsWith('2026-01-01T00:00:00.000Z INFO [')).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
    expect(formatLogLine({ time: 't', level: 'warn', step: 's', msg: 'a\nb\r\u0085c\u202ed' })).toBe(
      't WARN [s] a\\nb\\r\\u0085c\\u202ed',
    );
  });

  it('are read only when the message is one: anything else is skipped', () => {
    expect(parseLogEntry('{"time":"t","level":"info","step":"s","msg":"m","extra":1}')).toEqual({
      time: 't',
      level: 'info',
      step: 's',
      msg: 'm',
    });
    for (const text of [
      '',
      'not json',
      'null',
      '[]',
      '"x"',
      '{"time":1,"level":"info","step":"s","msg":"m"}',
      '{"time":"t","level":"info","step":"s"}',
    ]) {
      expect(parseLogEntry(text)).toBeNull();
    }
  });
});
