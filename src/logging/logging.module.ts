import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';

export const LOGGER = Symbol('LOGGER');

/** The process's pino logger (redacting), made by the entry point and shared by every module. */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(logger: Logger): DynamicModule {
    return { module: LoggingModule, providers: [{ provide: LOGGER, useValue: logger }], exports: [LOGGER] };
  }
}
