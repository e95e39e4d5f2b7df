import { loadConfig } from '../../src/config/config';
import { makeDataSource, migrateUnderLock } from '../../src/projection/data-source';
import { makeTestTls } from '../support/certs';
import { TlsPostgres } from '../support/postgres-tls';
import { API_KEY, startService } from '../support/service';
import { TestNats } from '../support/services';

jest.setTimeout(60_000);

/** The read-model over TLS with verification, against a PostgreSQL that accepts nothing else. */
describe('PostgreSQL over TLS (verify-full)', () => {
  let pg: TlsPostgres;
  beforeAll(async () => (pg = await TlsPostgres.start()));
  afterAll(() => pg?.stop());

  const usesTls = async (db: Parameters<typeof makeDataSource>[0]) => {
    const ds = await makeDataSource(db).initialize();
    try {
      const [row] = await ds.query('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      return row;
    } finally {
      await ds.destroy();
    }
  };

  it('connects with sslmode=verify-full and sslrootcert in DATABASE_URL, and with DATABASE_SSL_CA', async () => {
    expect(await usesTls(`${pg.url()}?sslmode=verify-full&sslrootcert=${pg.tls.caFile}`)).toMatchObject({
      ssl: true,
      version: expect.stringMatching(/^TLSv1\.[23]$/),
    });
    const config = loadConfig({ API_KEY, DATABASE_URL: pg.url(), DATABASE_SSL_CA: pg.tls.caFile });
    expect(await usesTls({ url: config.databaseUrl, sslCaFile: config.databaseSslCa })).toMatchObject({ ssl: true });
  });

  it('refuses a server certificate from another CA; the server refuses a plain connection', async () => {
    const other = makeTestTls();
    await expect(usesTls({ url: pg.url(), sslCaFile: other.caFile })).rejects.toThrow(
      /self.signed|unable to verify|certificate/i,
    );
    await expect(usesTls(pg.url())).rejects.toThrow(/no encryption|pg_hba\.conf rejects/i);
  });

  it('the service migrates and serves its read-model over TLS', async () => {
    const nats = await TestNats.start();
    const svc = await startService({ NATS_URL: nats.url, DATABASE_URL: pg.url(), DATABASE_SSL_CA: pg.tls.caFile });
    try {
      const ready = await fetch(`${svc.base}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ok', nats: 'up', postgres: 'up' });
      const [row] = await svc.runtime.ds.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(row.ssl).toBe(true);
      expect(await migrateUnderLock(svc.runtime.ds)).toEqual([]);
    } finally {
      await svc.stop();
      await nats.destroy();
    }
  });

  it('stops at start naming DATABASE_SSL_CA when the file cannot be read', () => {
    expect(() => loadConfig({ API_KEY, DATABASE_SSL_CA: '/nonexistent/ca.pem' })).toThrow(
      'DATABASE_SSL_CA: /nonexistent/ca.pem cannot be read',
    );
  });
});
