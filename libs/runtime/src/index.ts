export * from './compiled-file';
export * from './helper-process';
