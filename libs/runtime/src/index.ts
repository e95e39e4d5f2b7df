export * from './compiled-file';
