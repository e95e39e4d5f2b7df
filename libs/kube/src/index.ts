export * from './errors';
export * from './job-spec';
export * from './jobs';
export * from './target-cluster';
export * from './kube-targets';
export * from './credentials-secret';
export * from './input-secret';
