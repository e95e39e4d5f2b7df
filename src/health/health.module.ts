import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';
import { ReadinessGauge } from './readiness-gauge';

@Module({ controllers: [HealthController], providers: [Readiness, ReadinessGauge] })
export class HealthModule {}
