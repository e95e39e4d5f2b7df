export * from './generate';
export { applyPlan } from './target';
export * from './errors';
export type { RegistryCredentials } from './credentials';
export * from './preview';
export { GeneratorPool, IN_PROCESS_GENERATOR } from './generator-pool';
export type { TreeGenerator, GeneratorPoolOptions } from './generator-pool';
export { CREDENTIAL_CLASSES, missingSupplied, parseSuppliedCredentials } from './credential-plan';
export type { CredentialPlanEntry, CredentialClass, SuppliedCredentials } from './credential-plan';
