import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, tempDir } from '../support/files';

const CTL = join(__dirname, '../../bin/scaffolderctl');
const RUN = '6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60';

/**
 * The files the built scaffolderctl loaded for one command line, packages by name (`@nats-io/jetstream`): a preloaded
 * module writes require's cache when the process exits. Nothing listens at the URLs, so a command that connects
 * fails (exit 1) after loading what it needs.
 */
function loadedBy(...argv: string[]): { status: number | null; files: string[]; packages: string[] } {
  const dir = tempDir('ctl-loaded');
  const preload = join(dir, 'record-loaded.js');
  const list = join(dir, 'loaded.json');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));`,
  );
  const r = spawnSync(process.execPath, ['--require', preload, CTL, ...argv], {
    env: childEnv({
      SCAFFOLDER_URL: 'http://127.0.0.1:1',
      SCAFFOLDER_API_KEY: 'unused-key-0123456789abcdef',
      NATS_URL: 'nats://127.0.0.1:1',
    }),
    encoding: 'utf8',
  });
  const files: string[] = JSON.parse(readFileSync(list, 'utf8')).filter((f: string) => f !== preload);
  const packages = [
    ...new Set(files.map((f) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1]).filter((p) => p !== undefined)),
  ].sort();
  return { status: r.status, files, packages };
}

/**
 * An operator types scaffolderctl all day: each command loads what it uses and nothing of the service (#49). What a
 * process loads is most of its start-up time (the framework and the database driver took most of a second).
 */
describe('what the built scaffolderctl loads', () => {
  it('loads no package for --version, --help, completion or the API commands (the API client is Node built-ins)', () => {
    for (const argv of [['--version'], ['--help'], ['completion', 'bash'], ['get', RUN], ['list'], ['logs', RUN]]) {
      const r = loadedBy(...argv);
      expect([argv, r.packages]).toEqual([argv, []]);
      expect([argv, r.files.filter((f) => /\/libs\/(event-store|generator|kube|git|steps)\//.test(f))]).toEqual([
        argv,
        [],
      ]);
    }
  });

  it('loads NATS for the stream commands, and neither the framework nor the database driver for those reading only NATS', () => {
    for (const argv of [['events', RUN], ['stream-info'], ['tail'], ['replay', '--from-seq', '1']]) {
      const r = loadedBy(...argv);
      expect([argv, r.status]).toEqual([argv, 1]); // NATS is not there
      expect(r.packages).toContain('@nats-io/transport-node');
      expect([argv, r.packages.filter((p) => /^(@nestjs\/|typeorm$|pg$|nestjs-pino$|pino$|rxjs$)/.test(p))]).toEqual([
        argv,
        [],
      ]);
    }
  });
});
