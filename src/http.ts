import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express, { NextFunction, Request, Response } from 'express';
import { ApiError, errorBody } from './api/api-error';
import { ApiErrorFilter } from './api/error.filter';
import { AppModule } from './app.module';
import type { Runtime } from './runtime';

const MAX_BODY = 1024 * 1024;

/** JSON bodies only, at most 1 MiB: 415, 413 and 400 (malformed) before any handler runs. */
function jsonBodies() {
  const parse = express.json({ limit: MAX_BODY, strict: false, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    const length = Number(req.header('content-length') ?? 0);
    if (length > 0 && !req.is('application/json')) return res.status(415).json(errorBody(new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json')));
    parse(req, res, (err?: any) => {
      if (!err) return next();
      if (err.type === 'entity.too.large') return res.status(413).json(errorBody(new ApiError(413, 'payload_too_large', 'request body is over 1 MiB')));
      return res.status(400).json(errorBody(new ApiError(400, 'invalid_json', 'body: malformed JSON')));
    });
  };
}

/** API latency by route pattern (not by id), recorded when the response is finished. */
function measureLatency(runtime: Runtime) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl ?? ''}${req.route.path}` : 'unmatched';
      runtime.metrics.apiLatency.observe({ transport: 'http', route: `${req.method} ${route}`, status: String(res.statusCode) }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

export async function createHttpApp(runtime: Runtime): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.with(runtime), { bodyParser: false, logger: ['error', 'warn'] });
  app.use(measureLatency(runtime));
  app.use(jsonBodies());
  app.useGlobalFilters(new ApiErrorFilter(runtime.logger));
  app.enableShutdownHooks();
  return app;
}
