import fc from 'fast-check';
import { DEFAULT_REPLY_PREFIXES, replyAllowed, validReplyPrefix } from './reply-subjects';

const CALLERS = ['_INBOX_controller', '_INBOX_scaffolder_ops'];

/** A token as nats.js, Go and the CLI make inbox tokens (nuids, counters). */
const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
const inboxOf = (prefix: string) =>
  fc.array(token, { minLength: 1, maxLength: 4 }).map((tokens) => [prefix, ...tokens].join('.'));

describe('replyAllowed: the NATS API answers only a caller inbox', () => {
  it.each([
    ['_INBOX_controller.AbC123.1'],
    ['_INBOX_controller.x'],
    ['_INBOX_scaffolder_ops.nuid.7'],
    ['_INBOX_controller.nuid-with-dash_and_underscore.42'],
  ])('answers %s', (reply) => {
    expect(replyAllowed(reply, CALLERS)).toBe(true);
  });

  it.each([
    ['$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS'],
    ['$JS.API.STREAM.PURGE.SCAFFOLD_LOGS'],
    ['scaffold.input.0f3c.sealing-cert'],
    ['scaffold.logs.0f3c'],
    ['scaffold.run.0f3c'],
    ['scaffolds.v1.get'],
    ['_INBOX_controller'], // the prefix alone: no token after it
    ['_INBOX_controller.'], // an empty token
    ['_INBOX_controller..1'],
    ['_INBOX_controller.1.'],
    ['_INBOX_controllerX.1'], // a lookalike of the prefix
    ['_INBOX_controller_evil.1'],
    ['X_INBOX_controller.1'],
    ['_INBOX_controller.*'],
    ['_INBOX_controller.>'],
    ['_INBOX_controller.a.*.b'],
    ['_INBOX_controller.$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS'],
    ['_INBOX_controller.a b'],
    ['_INBOX.1'], // a prefix not configured
    [''],
  ])('refuses %j', (reply) => {
    expect(replyAllowed(reply, CALLERS)).toBe(false);
  });

  it('answers every inbox made of a configured prefix and literal tokens', () => {
    fc.assert(fc.property(fc.constantFrom(...CALLERS).chain(inboxOf), (reply) => replyAllowed(reply, CALLERS)));
  });

  it('refuses any subject that does not start with a configured prefix and a dot', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (reply) => {
        fc.pre(!CALLERS.some((p) => reply.startsWith(`${p}.`)));
        return !replyAllowed(reply, CALLERS);
      }),
    );
  });

  it('refuses a caller inbox with a wildcard, an empty token or any other character put anywhere after the prefix', () => {
    const bad = fc.constantFrom('*', '>', '', '$', ' ', '\t', '\n', '\u00e9', '/', '#');
    fc.assert(
      fc.property(
        fc.constantFrom(...CALLERS),
        fc.array(token, { maxLength: 4 }),
        bad,
        fc.nat(),
        (prefix, tokens, badToken, at) => {
          const withBad = [...tokens];
          withBad.splice(at % (tokens.length + 1), 0, badToken);
          return !replyAllowed([prefix, ...withBad].join('.'), CALLERS);
        },
      ),
    );
  });

  it('refuses prefix lookalikes: a configured prefix with anything but a dot after it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CALLERS),
        fc.stringMatching(/^[A-Za-z0-9_$*>-]{1,8}$/),
        inboxOf(''),
        (prefix, extra, rest) => !replyAllowed(`${prefix}${extra}${rest}`, CALLERS),
      ),
    );
  });

  it('refuses everything when no prefix is configured', () => {
    fc.assert(fc.property(fc.string(), (reply) => !replyAllowed(reply, [])));
  });

  it('the default answers nats.js default inboxes (_INBOX.<nuid>.<n>) and the controller of deploy/nats, never a JetStream or run subject', () => {
    expect(replyAllowed('_INBOX.Xb7nQ0u0S1k2PpVqR3aZ9A.1', DEFAULT_REPLY_PREFIXES)).toBe(true);
    expect(replyAllowed('_INBOX_controller.Xb7nQ0u0S1k2PpVqR3aZ9A.1', DEFAULT_REPLY_PREFIXES)).toBe(true);
    for (const reply of [
      '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS',
      '$SYS.REQ.SERVER.PING',
      'scaffold.run.x',
      '_INBOX',
      '_INBOX_scaffolder.x',
      '_INBOX_scaffolder_runner.x',
    ]) {
      expect([reply, replyAllowed(reply, DEFAULT_REPLY_PREFIXES)]).toEqual([reply, false]);
    }
  });
});

describe('validReplyPrefix', () => {
  it.each([['_INBOX'], ['_INBOX_controller'], ['team.inbox']])('accepts %s', (prefix) =>
    expect(validReplyPrefix(prefix)).toBe(true),
  );
  it.each([[''], ['$JS'], ['_INBOX.>'], ['_INBOX.*'], ['a..b'], ['a.'], ['.a'], ['a b']])('refuses %j', (prefix) =>
    expect(validReplyPrefix(prefix)).toBe(false),
  );
});
