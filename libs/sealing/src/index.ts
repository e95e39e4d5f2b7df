export * from './certificate';
export * from './sealed-secrets';
