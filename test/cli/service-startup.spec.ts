import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { childEnv } from '../support/files';

describe('the service process (npm start) when a dependency is not there', () => {
  it('says in one line that NATS cannot be reached and exits 1: no framework stack, no start-up log first', () => {
    const r = spawnSync(process.execPath, [join(__dirname, '../../dist/src/main.js')], {
      env: childEnv({
        NATS_URL: 'nats://127.0.0.1:1',
        API_KEY: 'startup-test-key-0123456789abcdef',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
        PORT: '1', // never listened on: the service stops before it would
      }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([r.status, r.stdout, r.stderr]).toEqual([
      1,
      '',
      'gitops-scaffolder: NATS at nats://127.0.0.1:1 is not reachable (connection refused)\n',
    ]);
  });
});
