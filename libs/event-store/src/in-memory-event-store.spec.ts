import { eventStoreContract } from '../../../test/support/event-store-contract';
import { InMemoryEventStore } from './in-memory-event-store';

describe('in-memory event store (the same contract as the JetStream store)', () => {
  const store = new InMemoryEventStore();
  eventStoreContract(() => store);
});
