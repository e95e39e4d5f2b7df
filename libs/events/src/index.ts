export * from './catalogue';
export * from './schemas';
export * from './envelope';
