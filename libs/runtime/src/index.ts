export * from './compiled-file';
export * from './helper-process';
export * from './egress';
export * from './process-groups';
