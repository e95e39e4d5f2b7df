import type { GenerateOptions } from '#libs/generator';

/**
 * A pass over a home-ops snapshot (onedr0p's layout: the environment in kubernetes/main, SOPS-encrypted cluster
 * secrets) for cluster acme, as the specs on those snapshots run it; `extra` sets the pass, credentials and the rest.
 */
export const homeOpsOptions = (
  ageRecipient: string,
  repoDir: string,
  templateDir: string,
  extra: Partial<GenerateOptions> = {},
): GenerateOptions => ({
  repoDir,
  templateDir,
  referenceEnv: 'kubernetes/main',
  clusterName: 'acme',
  domain: 'acme.example.com',
  region: 'eu-west-1',
  acmeEmail: 'ops@acme.example.com',
  pass: 'infra',
  secretsBackend: 'sops',
  ageRecipients: [ageRecipient],
  ...extra,
});
