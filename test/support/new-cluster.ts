import type { GenerateOptions } from '#libs/generator';

/**
 * The options of a first pass for the tests' new cluster, acme (acme.io, us-east-1, ops@acme.io),
 * from the reference's staging environment into `repoDir`; `extra` adds to or overrides them.
 */
export const acmeFirstPass = (
  repoDir: string,
  templateDir: string,
  extra: Partial<GenerateOptions> = {},
): GenerateOptions => ({
  repoDir,
  templateDir,
  referenceEnv: 'staging',
  clusterName: 'acme',
  domain: 'acme.io',
  region: 'us-east-1',
  acmeEmail: 'ops@acme.io',
  pass: 'infra',
  ...extra,
});
