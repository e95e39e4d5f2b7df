export * from './errors';
export * from './git-workspace';
export * from './git-access';
export * from './repository-url';
export * from './repository-cache';
export * from './git-command';
