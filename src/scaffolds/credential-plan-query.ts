import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '../../libs/event-store/src';
import type { CredentialPlanItem } from '../common/api-shapes';
import type { CallerIdentity } from '../common/api-keys';
import { EVENT_STORE } from '../event-store/event-store.module';
import { RequestChecks } from './request-checks';
import { requireRun } from './run-access';

/**
 * A run's credential plan by class (generated, derived, supplied, configuration, registry), for the
 * run's owner (or an admin): the plan of the reference this service is configured with, which is the
 * one its runs use. Names of Secrets and keys only; values never leave the pass.
 */
@Injectable()
export class CredentialPlanQuery {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly checks: RequestChecks,
  ) {}

  async forRun(id: unknown, caller: CallerIdentity): Promise<{ items: CredentialPlanItem[] }> {
    await requireRun(this.store, id, caller);
    const items: CredentialPlanItem[] = this.checks
      .referenceCredentials()
      .map(({ namespace, name, key, class: kind }) => ({ namespace, name, key, class: kind }));
    return { items };
  }
}
