import { DecideOptions, DecisionResult, EventStore, handleCommand } from '../../event-store/src';
import { Command, runDecider, RunState } from './decider';

/**
 * A run's commands against an event store: each is decided by the run's rules on the run's history
 * and appended (see `handleCommand`). A rule's refusal is a RunRuleViolation.
 */
export class RunCommands {
  constructor(private readonly store: EventStore) {}

  handle(runId: string, command: Command, opts?: DecideOptions): Promise<DecisionResult<RunState>> {
    return handleCommand(this.store, runDecider, runId, command, opts);
  }
}
