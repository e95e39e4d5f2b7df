import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from './config';

/** The injection token of the validated configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** The configuration, loaded and checked once by the entry point (main, runner, ctl) and shared by every module. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
