export * from './suggest';
export * from './version';
