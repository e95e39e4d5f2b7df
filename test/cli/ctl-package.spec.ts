import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, tempDir } from '../support/files';

const root = join(__dirname, '../..');
const repo = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/**
 * scaffolderctl installable on its own (#49): scripts/pack-scaffolderctl.js packs the built files it loads with a
 * package.json of only the packages they require. Its API commands need none of them: the packed folder runs
 * them as it is, with no node_modules anywhere above it.
 */
describe('the scaffolderctl package (npm run pack:ctl)', () => {
  const out = tempDir('ctl-package');
  const folder = join(out, 'package');
  let tarball: string;
  beforeAll(() => {
    tarball = execFileSync(process.execPath, [join(root, 'scripts/pack-scaffolderctl.js'), out], {
      encoding: 'utf8',
    }).trim();
  });
  const ctl = (...argv: string[]) =>
    spawnSync(process.execPath, [join(folder, 'bin/scaffolderctl'), ...argv], {
      env: childEnv({ SCAFFOLDER_URL: 'http://127.0.0.1:1', SCAFFOLDER_API_KEY: 'unused-key-0123456789abcdef' }),
      encoding: 'utf8',
    });

  it('names only what the client and the ops commands require: NATS, the event schemas, TypeORM and its driver', () => {
    expect(existsSync(tarball)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'scaffolderctl',
      version: repo.version,
      bin: { scaffolderctl: 'bin/scaffolderctl' },
    });
    expect(Object.keys(manifest.dependencies)).toEqual([
      '@nats-io/jetstream',
      '@nats-io/nats-core',
      '@nats-io/transport-node',
      'ajv',
      'pg',
      'typeorm',
      'yaml',
    ]);
    for (const [name, version] of Object.entries(manifest.dependencies)) expect(version).toBe(repo.dependencies[name]);
  });

  it('runs --version and the API commands from the packed files alone', () => {
    expect(existsSync(join(folder, 'node_modules'))).toBe(false);
    expect([ctl('--version').status, ctl('--version').stdout]).toEqual([0, `scaffolderctl ${repo.version}\n`]);
    const get = ctl('get', '6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60');
    expect([get.status, get.stderr]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: http:\/\/127\.0\.0\.1:1 could not be reached: /),
    ]);
  });
});
