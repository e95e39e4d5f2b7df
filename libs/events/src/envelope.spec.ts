import { randomUUID } from 'node:crypto';
import { parseEvent, stamp, tryParseEvent } from './envelope';

const runId = randomUUID();
const subject = `scaffold.run.${runId}`;
const pushed = stamp(
  { type: 'InfraPushed', data: { commit: 'c'.repeat(40), files_changed: 3 } },
  runId,
  'e1',
  new Date(0),
  null,
);

describe('reading a stored envelope', () => {
  it('is the envelope as written with its sequence, its keys in the order a copy would have', () => {
    const event = parseEvent(JSON.stringify(pushed), 7, subject);
    expect(event).toEqual({ ...pushed, seq: 7 });
    expect(Object.keys(event)).toEqual(Object.keys({ ...pushed, seq: 7 }));
  });

  it('raises an older version to the current one, and takes an envelope without a version for version 1', () => {
    const v1 = { ...pushed, type: 'SealedSecretsReady', schema_version: 1, data: { source: 'given_certificate' } };
    expect(parseEvent(JSON.stringify(v1), 8, subject)).toMatchObject({
      schema_version: 2,
      data: { source: 'given_certificate', controller: null },
      seq: 8,
    });
    const { schema_version: _, ...unversioned } = v1;
    expect(parseEvent(JSON.stringify(unversioned), 9, subject)).toMatchObject({ schema_version: 2, seq: 9 });
  });

  it.each([
    ['another run of the same length', `scaffold.run.${randomUUID()}`],
    ['another prefix of the same length', `scaffold_run.${runId}`],
    ['a longer subject ending in the run', `x.scaffold.run.${runId}`],
    ['the run without the prefix', runId],
  ])('refuses an event on %s', (_, other) => {
    expect(tryParseEvent(JSON.stringify(pushed), 3, other)).toEqual({
      invalid: { seq: 3, subject: other, reason: `stream message 3 on ${other} names run ${runId}` },
    });
  });

  it('refuses what is not JSON, not an event, or data its schema does not allow', () => {
    const reason = (json: string) => tryParseEvent(json, 4, subject);
    expect(reason('not json')).toEqual({ invalid: { seq: 4, subject, reason: 'stream message 4 is not JSON' } });
    expect(reason(JSON.stringify({ ...pushed, type: 'Nope' }))).toMatchObject({
      invalid: { reason: 'stream message 4 is not a scaffold event' },
    });
    expect(reason(JSON.stringify({ ...pushed, data: { commit: 'c' } }))).toMatchObject({
      invalid: { reason: "stream message 4: InfraPushed must have required property 'files_changed'" },
    });
  });
});
