import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { GeneratorPool, TreeGenerator } from '../../libs/generator/src';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';

/** Where the steps and the preview endpoint generate trees: a worker-thread pool of this process. */
export const TREE_GENERATOR = Symbol('TREE_GENERATOR');

/** Stops the pool's threads once everything that generates has stopped (after the step processors' grace period). */
@Injectable()
class GeneratorPoolShutdown implements OnApplicationShutdown {
  constructor(@Inject(TREE_GENERATOR) private readonly generator: TreeGenerator) {}

  onApplicationShutdown(): Promise<void> {
    return this.generator.close();
  }
}

/** Generation off the event loop: GENERATOR_THREADS worker threads at GENERATOR_NICE lower CPU priority. */
@Global()
@Module({})
export class GenerationModule {
  static forRoot(): DynamicModule {
    return {
      module: GenerationModule,
      providers: [
        {
          provide: TREE_GENERATOR,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => new GeneratorPool(config.generation),
        },
        GeneratorPoolShutdown,
      ],
      exports: [TREE_GENERATOR],
    };
  }
}
