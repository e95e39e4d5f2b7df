import { Controller, Get, INestApplication } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import pino from 'pino';
import { loadConfig } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { LoggingModule } from '../logging/logging.module';
import { ApiExceptionFilter } from './api-exception.filter';
import { ApiKeyGuard } from './api-key.guard';
import { Caller } from './caller';
import { Public } from './public.decorator';

const KEY = 'guard-test-key-0123456789';

/** A handler added without thinking about authentication: the global guard still applies. */
@Controller('probe')
class ProbeController {
  @Get('new')
  newHandler(@Caller() caller: string) {
    return { caller };
  }

  @Public()
  @Get('open')
  open() {
    return { open: true };
  }
}

describe('ApiKeyGuard (global)', () => {
  let app: INestApplication;
  let base: string;
  const get = async (path: string, key?: string) => {
    const res = await fetch(base + path, { headers: key ? { 'x-api-key': key } : {} });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig({ API_KEYS: `alice=${KEY}` })),
        LoggingModule.forRoot(pino({ level: 'silent' })),
      ],
      controllers: [ProbeController],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(() => app?.close());

  it('authenticates a handler that says nothing about it, and names the caller', async () => {
    expect(await get('/probe/new')).toEqual({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'missing or wrong X-Api-Key' } },
    });
    expect((await get('/probe/new', `${KEY}x`)).status).toBe(401);
    expect(await get('/probe/new', KEY)).toEqual({
      status: 200,
      body: { caller: { name: 'alice', role: 'operator' } },
    });
  });

  it.each(['api_key', 'apikey', 'API-KEY', 'x-api-key', 'key', 'token', 'access_token'])(
    'refuses a key in the query string (?%s=), on public handlers and with a right header too (401)',
    async (name) => {
      for (const [path, key] of [
        ['/probe/new', undefined],
        ['/probe/new', KEY],
        ['/probe/open', undefined],
      ] as const) {
        expect([path, await get(`${path}?limit=5&${name}=${KEY}`, key)]).toEqual([
          path,
          {
            status: 401,
            body: {
              error: {
                code: 'api_key_in_query',
                message: 'API keys are accepted only in the X-Api-Key header, never in the URL',
              },
            },
          },
        ]);
      }
    },
  );

  it('lets a @Public() handler answer without a key', async () => {
    expect(await get('/probe/open')).toEqual({ status: 200, body: { open: true } });
  });
});
