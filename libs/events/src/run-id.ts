/** Run ids are UUIDs (the service makes them with randomUUID); every edge that takes one checks it with this. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isRunId = (value: unknown): value is string => typeof value === 'string' && RUN_ID.test(value);
