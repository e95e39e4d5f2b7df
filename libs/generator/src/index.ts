export * from './generate';
export * from './errors';
export type { RegistryCredentials } from './credentials';
