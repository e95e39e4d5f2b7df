export * from './catalogue';
export * from './schemas';
export * from './run-id';
export * from './envelope';
export * from './run-plan';
export * from './run-plans';
