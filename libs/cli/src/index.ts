export * from './args';
export * from './completion';
export * from './options';
export * from './suggest';
export * from './version';
