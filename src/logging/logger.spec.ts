import { Controller, Get, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Writable } from 'node:stream';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import pino from 'pino';
import { LOG_REDACT_PATHS } from './logger';
import { LoggingModule } from './logging.module';

const KEY = 'sk-live-0123456789abcdef';

@Controller()
class ProbeController {
  private readonly log = new Logger('Probe');
  @Get('work')
  work() {
    this.log.debug({ msg: 'options', nats: { password: 'NatsPassword-123' } });
    return { ok: true };
  }
  @Get('readyz')
  ready() {
    return { status: 'ok' };
  }
}

describe("Nest's own lines and request lines go through the service's pino logger (nestjs-pino)", () => {
  const lines: any[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    @Module({
      imports: [
        LoggingModule.forRoot(pino({ level: 'debug', redact: { paths: LOG_REDACT_PATHS, censor: '***' } }, sink)),
      ],
      controllers: [ProbeController],
    })
    class ProbeModule {}
    const app = await NestFactory.create(ProbeModule, { bufferLogs: true });
    app.useLogger(app.get(NestPinoLogger));
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    close = () => app.close();
  });
  afterAll(() => close());

  it("as JSON lines with their level and the context Nest gives (start-up's route mapping)", () => {
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 30, context: 'RouterExplorer', msg: expect.stringContaining('/work, GET') }),
    );
  });

  it('one line per request naming method, path and status, never its headers', async () => {
    const res = await fetch(`${base}/work`, { headers: { 'x-api-key': KEY, authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    const request = lines.find((l) => l.req?.url === '/work' && l.res);
    expect(request).toMatchObject({ level: 30, req: { method: 'GET', url: '/work' }, res: { statusCode: 200 } });
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('a query string is logged as ***: a key pasted there (?api_key=) never reaches a line', async () => {
    for (const query of [`api_key=${KEY}`, `limit=5&token=${KEY}`, KEY]) {
      expect((await fetch(`${base}/work?${query}`)).status).toBe(200);
    }
    expect(lines.filter((l) => l.req?.url?.startsWith('/work?'))).toEqual(
      Array(3).fill(expect.objectContaining({ req: expect.objectContaining({ url: '/work?***' }) })),
    );
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('with the same redaction as every other line', () => {
    const line = lines.find((l) => l.context === 'Probe');
    expect(line.nats.password).toBe('***');
    expect(JSON.stringify(lines)).not.toContain('NatsPassword-123');
  });

  it('probes are answered without a line each', async () => {
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(lines.filter((l) => l.req?.url === '/readyz')).toEqual([]);
  });
});
