export * from './generate';
export * from './errors';
export type { RegistryCredentials } from './credentials';
export * from './preview';
export { missingSupplied, parseSuppliedCredentials } from './credential-plan';
export type { CredentialPlanEntry, CredentialClass, SuppliedCredentials } from './credential-plan';
