export * from './catalogue';
export * from './schemas';
