export * from './run-log';
export * from './settings';
export * from './ports';
export * from './step-handlers';
export * from './step-processor';
export * from './step-crashes';
export * from './crash-points';
export * from './step-registry';
