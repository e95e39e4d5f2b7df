export * from './forge-port';
