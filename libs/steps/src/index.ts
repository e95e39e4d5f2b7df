export * from './run-log';
export * from './settings';
export * from './step-handlers';
export * from './step-worker';
export * from './crash-points';
