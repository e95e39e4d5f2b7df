export * from './event-store';
export * from './streams';
export * from './stream-admin';
export * from './jetstream-event-store';
export * from './in-memory-event-store';
export * from './run-log-store';
export * from './run-inputs';
export * from './processor';
