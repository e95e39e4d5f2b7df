export * from './git-workspace';
