/**
 * Secrets by what they are (#48), on real SOPS-encrypted Secrets of onedr0p/home-ops (2022, vendored
 * unchanged under test/fixtures/public/onedr0p-home-ops-2022): only the cluster's own credentials are
 * generated; whole files (a secretGenerator's TOML files, a config document under one key),
 * third-party credentials and hosts/domains are supplied, all listed in one refusal.
 */
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { CredentialPlan, ReferenceSecret } from '#libs/generator/credential-plan';
import { generatorSecretBody, readSecretGenerators } from '#libs/generator/secret-generators';
import { yamlObjects } from '../support/files';

const ROOT = join(__dirname, '../fixtures/public/onedr0p-home-ops-2022');
const SECRET_FILES = [
  'cluster/config/cluster-secrets.sops.yaml',
  'cluster/apps/default/authelia/secret.sops.yaml',
  'cluster/apps/default/discord-support-threads-bot/secret.sops.yaml',
  'cluster/apps/flux-system/webhook/github/secret.sops.yaml',
  'cluster/apps/default/sonarr/secret.sops.yaml',
  'cluster/apps/networking/cloudflare-ddns/secret.sops.yaml',
  'cluster/apps/default/kopia-jobs/secret.sops.yaml',
  'cluster/apps/monitoring/grafana/secret.sops.yaml',
  'cluster/apps/default/smtp-relay/secret.sops.yaml',
  'cluster/apps/default/gitea/secret.sops.yaml',
];
const GLAUTH = 'cluster/apps/default/glauth';

/** The reference's Secrets as the plan reads them: the manifests, and the glauth generator over its SOPS TOML files. */
function referenceSecrets(): ReferenceSecret[] {
  const manifests = SECRET_FILES.flatMap((file) =>
    yamlObjects(join(ROOT, file)).map((body) => ({ namespace: body.metadata.namespace, body, file })),
  );
  const kfile = posix.join(GLAUTH, 'kustomization.yaml');
  const k = parse(readFileSync(join(ROOT, kfile), 'utf8'));
  const generators = readSecretGenerators(ROOT, GLAUTH, kfile, k).map((g) => ({
    namespace: k.namespace,
    body: generatorSecretBody(g, k.namespace),
    file: kfile,
  }));
  return [...manifests, ...generators];
}

const classOf = (plan: CredentialPlan) =>
  Object.fromEntries(plan.entries.map((e) => [`${e.namespace}/${e.name}/${e.key}`, e.class]));

describe('Secrets by what they are, on onedr0p/home-ops (2022)', () => {
  const plan = CredentialPlan.build(referenceSecrets(), { requireSupplied: false });
  const classes = classOf(plan);
  const suppliedKeys = plan.entries
    .filter((e) => e.class === 'supplied')
    .map((e) => `${e.namespace}/${e.name}/${e.key}`);

  it("supplies the TOML files of glauth's secretGenerator, never a random string", () => {
    expect(classes).toMatchObject({
      'default/glauth/server.toml': 'supplied',
      'default/glauth/groups.toml': 'supplied',
      'default/glauth/users.toml': 'supplied',
    });
    expect(plan.entries.find((e) => e.key === 'server.toml')?.recognised_by).toBe('file');
  });

  it('supplies a config document under one key, a private key, and hosts and domains named by their keys', () => {
    expect(classes).toMatchObject({
      'default/kopia-sync/repository.config': 'supplied',
      'default/authelia/AUTHELIA_IDENTITY_PROVIDERS_OIDC_ISSUER_PRIVATE_KEY': 'supplied',
      'flux-system/cluster-secrets/SECRET_PUBLIC_DOMAIN': 'supplied',
      'flux-system/cluster-secrets/SECRET_PRIVATE_DOMAIN': 'supplied',
      'flux-system/cluster-secrets/SECRET_EMAIL_DOMAIN': 'supplied',
      'networking/cloudflare-ddns/CLOUDFLARE_RECORD_NAME': 'supplied',
      'networking/cloudflare-ddns/CLOUDFLARE_EMAIL': 'supplied',
    });
  });

  it('supplies third-party API keys, tokens, webhooks, OAuth client secrets and SMTP passwords', () => {
    expect(classes).toMatchObject({
      'flux-system/cluster-secrets/SECRET_UPTIMEROBOT_API_KEY': 'supplied',
      'flux-system/cluster-secrets/SECRET_PUSHOVER_USERKEY': 'supplied',
      'flux-system/cluster-secrets/SECRET_PUSHOVER_ALERT_MANAGER_APIKEY': 'supplied',
      'flux-system/cluster-secrets/SECRET_GITEA_OAUTH_CLIENT_SECRET': 'supplied',
      'flux-system/cluster-secrets/SECRET_GRAFANA_OAUTH_CLIENT_SECRET': 'supplied',
      'default/discord-support-threads-bot/BOT_TOKEN': 'supplied',
      'default/discord-support-threads-bot/CHANNEL_ID': 'supplied',
      'flux-system/github-webhook-token/token': 'supplied',
      'default/sonarr/SONARR__API_KEY': 'supplied',
      'default/sonarr/PUSHOVER_TOKEN': 'supplied',
      'networking/cloudflare-ddns/CLOUDFLARE_APIKEY': 'supplied',
      'default/smtp-relay/SMTP_PASSWORD': 'supplied',
      'default/gitea-config/minioSecretAccessKey': 'supplied',
    });
  });

  it("generates only the cluster's own passwords, secrets and usernames", () => {
    expect(classes).toMatchObject({
      'default/authelia/AUTHELIA_JWT_SECRET': 'generated',
      'default/authelia/AUTHELIA_SESSION_SECRET': 'generated',
      'default/authelia/AUTHELIA_STORAGE_ENCRYPTION_KEY': 'generated',
      'default/authelia/AUTHELIA_STORAGE_POSTGRES_PASSWORD': 'generated',
      'default/authelia/AUTHELIA_STORAGE_POSTGRES_USERNAME': 'generated',
      'default/authelia/AUTHELIA_IDENTITY_PROVIDERS_OIDC_HMAC_SECRET': 'generated',
      'monitoring/grafana-admin/admin-password': 'generated',
      'monitoring/grafana-admin/admin-user': 'generated',
      'monitoring/grafana/GF_DATABASE_PASSWORD': 'generated',
      'default/gitea-config/adminPassword': 'generated',
    });
  });

  it('refuses once, before anything is written, naming every missing key and never a value', () => {
    let message = '';
    try {
      CredentialPlan.build(referenceSecrets(), { requireSupplied: true, supplied: {} });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`${suppliedKeys.length} value(s) the generator must not invent are missing`);
    for (const key of suppliedKeys) expect(message).toContain(key);
    expect(message).toContain('default/glauth/server.toml (a whole file)');
    expect(message).not.toMatch(/ENC\[/);
  });

  it('takes the given files and credentials exactly as given', () => {
    const server = '[ldap]\n  enabled = true\n  listen = "0.0.0.0:389"\n';
    const given = Object.fromEntries(suppliedKeys.map((k) => [k, `given-${k.length}`]));
    given['default/glauth/server.toml'] = server;
    const full = CredentialPlan.build(referenceSecrets(), { requireSupplied: true, supplied: given });
    const glauth = full.valuesFor('default', 'glauth');
    expect(glauth['server.toml'].toString('utf8')).toBe(server);
    const authelia = full.valuesFor('default', 'authelia');
    expect(authelia.AUTHELIA_JWT_SECRET.toString('utf8')).toMatch(/^[A-Za-z0-9]{40}$/);
  });
});
