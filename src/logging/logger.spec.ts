import { Writable } from 'node:stream';
import pino from 'pino';
import { LOG_REDACT_PATHS, PinoNestLogger } from './logger';

describe("Nest's own logs go through the service's pino logger", () => {
  const lines: any[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  const nest = new PinoNestLogger(pino({ level: 'debug', redact: { paths: LOG_REDACT_PATHS, censor: '***' } }, sink));

  it('as JSON lines with their level and the context Nest gives', () => {
    nest.log('Mapped {/api/v1/scaffolds, POST} route', 'RouterExplorer');
    nest.error('connection lost', 'Error: connection lost\n    at x', 'ServerNats');
    nest.warn('slow', 'Scheduler');
    expect(lines[0]).toMatchObject({ level: 30, msg: 'Mapped {/api/v1/scaffolds, POST} route', context: 'RouterExplorer' });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'connection lost', context: 'ServerNats', stack: expect.stringContaining('at x') });
    expect(lines[2]).toMatchObject({ level: 40, context: 'Scheduler' });
  });

  it('with the same redaction as every other line', () => {
    nest.debug({ msg: 'options', nats: { password: 'NatsPassword-123' } }, 'NestFactory');
    expect(JSON.stringify(lines.at(-1))).not.toContain('NatsPassword-123');
    expect(lines.at(-1).nats.password).toBe('***');
  });
});
