export * from './decider';
export * from './run-commands';
