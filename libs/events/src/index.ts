export * from './catalogue';
export * from './schemas';
export * from './run-id';
export * from './envelope';
