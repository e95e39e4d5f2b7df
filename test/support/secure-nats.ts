import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestTls, TestTls } from './certs';
import { tempDir } from './files';
import { TestNats } from './services';

export const NATS_CONFIG = join(__dirname, '../../deploy/nats/nats-server.conf');
export const ROLES = ['service', 'controller', 'ops'] as const;
export type Role = (typeof ROLES)[number];
/** The inbox prefix deploy/nats/permissions.json gives each role. */
export const INBOX: Record<Role, string> = {
  service: '_INBOX_scaffolder',
  controller: '_INBOX_controller',
  ops: '_INBOX_scaffolder_ops',
};

/**
 * nats-server started with the shipped deploy/nats/nats-server.conf: TLS from a test CA, one
 * user per role with its permissions; `env(role)` is what a process of that role is given.
 */
export class SecureNats {
  private constructor(
    readonly server: TestNats,
    readonly tls: TestTls,
    private readonly passwords: Record<Role, string>,
    private readonly secrets: string,
  ) {}

  static async start(): Promise<SecureNats> {
    const tls = makeTestTls();
    const passwords = Object.fromEntries(
      ROLES.map((r) => [r, `${r}-Pw-${Math.random().toString(36).slice(2, 12)}`]),
    ) as Record<Role, string>;
    const env = {
      NATS_TLS_CERT: join(tls.dir, 'server.pem'),
      NATS_TLS_KEY: join(tls.dir, 'server-key.pem'),
      NATS_TLS_CA: tls.caFile,
      ...Object.fromEntries(ROLES.map((r) => [`SCAFFOLDER_${r.toUpperCase()}_PASSWORD`, passwords[r]])),
    };
    const server = await TestNats.startWithConfig(NATS_CONFIG, env, 'tls');
    return new SecureNats(server, tls, passwords, tempDir('nats-secrets'));
  }

  get url() {
    return this.server.url;
  }

  password(role: Role) {
    return this.passwords[role];
  }

  /** The settings a process of this role gets: its user, the password as a 0600 file, the CA, its inbox prefix. */
  env(role: Role): Record<string, string> {
    const file = join(this.secrets, `${role}.password`);
    writeFileSync(file, this.passwords[role], { mode: 0o600 });
    return {
      NATS_URL: this.url,
      NATS_USER: `scaffolder-${role}`,
      NATS_PASSWORD_FILE: file,
      NATS_TLS_CA: this.tls.caFile,
      NATS_INBOX_PREFIX: INBOX[role],
    };
  }

  /** A nats.js connection as that role (what a controller written against nats.js would open). */
  async connect(role: Role) {
    const { connect } = await import('@nats-io/transport-node');
    return connect({
      servers: this.url,
      user: `scaffolder-${role}`,
      pass: this.passwords[role],
      tls: { caFile: this.tls.caFile },
      inboxPrefix: INBOX[role],
    });
  }

  destroy() {
    return this.server.destroy();
  }
}
