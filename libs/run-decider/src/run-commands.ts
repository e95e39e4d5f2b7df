import { DecideOptions, DecisionResult, EventStore, handleCommand } from '#libs/event-store';
import { Command, runDecider, RunState } from './decider';

/**
 * Where a step records what it did: the run's commands decided and appended. In the service that is
 * RunCommands on the store; in a runner Job it is the service's runner API (the service decides).
 */
export interface RunCommandPort {
  handle(runId: string, command: Command, opts?: DecideOptions): Promise<DecisionResult<RunState>>;
}

/**
 * A run's commands against an event store: each is decided by the run's rules on the run's history
 * and appended (see `handleCommand`). A rule's refusal is a RunRuleViolation.
 */
export class RunCommands implements RunCommandPort {
  constructor(private readonly store: EventStore) {}

  handle(runId: string, command: Command, opts?: DecideOptions): Promise<DecisionResult<RunState>> {
    return handleCommand(this.store, runDecider, runId, command, opts);
  }
}
