export * from './git-workspace';
export * from './git-access';
