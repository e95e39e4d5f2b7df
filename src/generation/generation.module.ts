import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { boxLevel } from '#libs/git/build-box';
import { GeneratorPool, TreeGenerator } from '#libs/generator';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { LOGGER } from '../logging/logging.module';
import { Metrics } from '../metrics/metrics';

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

/**
 * The generator threads' heaps, summed (prom-client's own memory figures are the main thread's only): under load
 * they held 30 to 48% of the process's resident memory (docs/benchmarks.md), which an operator sizing the memory
 * limit needs to see.
 */
@Injectable()
class GeneratorHeapGauge {
  constructor(@Inject(TREE_GENERATOR) generator: TreeGenerator, @Optional() metrics?: Metrics) {
    if (!metrics) return;
    new Gauge({
      name: 'scaffold_generator_heap_bytes',
      help: 'V8 heap of the generator worker threads, summed: "used" (live objects) and "total" (held by V8)',
      labelNames: ['kind'],
      registers: [metrics.registry],
      async collect() {
        const heaps = await generator.threadHeaps();
        this.set(
          { kind: 'used' },
          heaps.reduce((sum, h) => sum + h.used, 0),
        );
        this.set(
          { kind: 'total' },
          heaps.reduce((sum, h) => sum + h.total, 0),
        );
      },
    });
  }
}

/**
 * Says at start which box builds run in here (BUILD_SANDBOX, docs/operations.md "Tenant content"), so
 * an operator sees a weaker one than expected before a tenant's repository is built. A demanded box
 * the machine cannot start is logged as an error; every build then refuses with the same words.
 */
@Injectable()
class BuildBoxReport implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    boxLevel(this.config.steps.kubectl ?? 'kubectl').then(
      (level) =>
        level === 'none'
          ? this.logger.warn(
              { level },
              'builds of repository content run without a box here (no bwrap, no network namespace): only the checks before a build, the environment allowlist and the limits hold; see docs/operations.md "Tenant content"',
            )
          : this.logger.info({ level }, `builds of repository content run in the ${level} box`),
      (e: Error) => this.logger.error({ err: e.message }, 'no build can run: the demanded box cannot start'),
    );
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
        GeneratorHeapGauge,
        BuildBoxReport,
      ],
      exports: [TREE_GENERATOR],
    };
  }
}
