export * from './run-log';
export * from './settings';
export * from './step-handlers';
export * from './step-processor';
export * from './crash-points';
