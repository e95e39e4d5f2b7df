export * from './compiled-file';
export * from './repo-limits';
export * from './credential-file';
