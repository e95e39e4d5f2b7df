export * from './forge-port';
export * from './http/forge-fetch';
export { GitHubForge } from './github/github-forge';
export { GitLabForge } from './gitlab/gitlab-forge';
export { GiteaForge } from './gitea/gitea-forge';
export * from './forge-settings';
export * from './forge-resolver';
