import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '#libs/event-store';
import type { CredentialPlanItem } from '../common/api-shapes';
import { fold } from '#libs/run-decider';
import type { CallerIdentity } from '../common/api-keys';
import { EVENT_STORE } from '../event-store/event-store.module';
import { RequestChecks } from './request-checks';
import { requireRun } from './run-access';

/**
 * A run's credential plan by class (generated, derived, supplied, configuration, registry), for the
 * run's owner (or an admin): the plan of the reference environment the run itself used (its request's
 * reference_env, else the one this service is configured with). Names of Secrets and keys only;
 * values never leave the pass.
 */
@Injectable()
export class CredentialPlanQuery {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly checks: RequestChecks,
  ) {}

  async forRun(id: unknown, caller: CallerIdentity): Promise<{ items: CredentialPlanItem[] }> {
    const { events } = await requireRun(this.store, id, caller);
    const items: CredentialPlanItem[] = this.checks
      .referenceCredentials(fold(events).request?.reference_env)
      .map(({ namespace, name, key, class: kind }) => ({ namespace, name, key, class: kind }));
    return { items };
  }
}
