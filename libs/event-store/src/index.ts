export * from './jetstream-event-store';
