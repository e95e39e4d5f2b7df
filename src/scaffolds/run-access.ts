import type { EventStore } from '#libs/event-store';
import { isRunId, StoredEvent } from '#libs/events';
import { fold } from '#libs/run-decider';
import { notFound } from '../common/api-error';
import { CallerIdentity, owns } from '../common/api-keys';

/** A run id from a path or body, or 404 (not 400): a malformed id names no run, like an unknown one. */
export function checkId(id: unknown): string {
  if (!isRunId(id)) throw notFound();
  return id;
}

/**
 * The run's id and events from the stream, or 404: also for a run of another key (unless the caller is
 * an admin), so a key cannot even learn that another key's run exists.
 */
export async function requireRun(
  store: EventStore,
  id: unknown,
  caller: CallerIdentity,
): Promise<{ runId: string; events: StoredEvent[] }> {
  const runId = checkId(id);
  const { events } = await store.readRun(runId);
  if (events.length === 0 || !owns(caller, fold(events).request?.requested_by)) throw notFound();
  return { runId, events };
}
