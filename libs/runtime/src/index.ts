export * from './compiled-file';
export * from './repo-limits';
