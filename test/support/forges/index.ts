export * from './forge-stand-in';
export * from './github-stand-in';
export * from './gitlab-stand-in';
export * from './gitea-stand-in';
