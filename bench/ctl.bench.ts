/**
 * How long `scaffolderctl` takes from the shell, each command beside `node -e 0` (a Node process that does nothing):
 * BENCH_CTL_ROUNDS (15) rounds, each starting the baseline and every command once in turn, so a busy moment of the
 * machine weighs on all of them alike. Prints each command's median and its ratio to the baseline's median.
 * The commands run against a real service with one finished run (a test-owned nats-server and database): `get` and
 * `list` over its REST API, `events` and `stream-info` straight from the stream.
 * Run: npm run bench:ctl.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRsaCert } from '../test/support/certs';
import { tempDir } from '../test/support/files';
import { createBody } from '../test/support/run-fixtures';
import { api, API_KEY, startService, untilTerminal } from '../test/support/service';
import { bareRepo, TestDatabase, TestNats } from '../test/support/services';

const ROUNDS = Number(process.env.BENCH_CTL_ROUNDS ?? 15);
const CTL = join(__dirname, '../../bin/scaffolderctl');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Wall-clock seconds of one process from spawn to exit; a failed command stops the benchmark (it measured nothing).
 * Never spawnSync: the service runs in this process and must answer while the command waits for it.
 */
function seconds(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) =>
    execFile(process.execPath, argv, { env }, (error, _stdout, stderr) =>
      error
        ? reject(new Error(`${argv.join(' ')} failed (${error.code ?? error.signal}): ${stderr}`))
        : resolve(Number(process.hrtime.bigint() - start) / 1e9),
    ),
  );
}

async function main() {
  const nats = await TestNats.start();
  const db = await TestDatabase.create();
  const svc = await startService({ NATS_URL: nats.url, DATABASE_URL: db.url });
  try {
    const remote = bareRepo();
    const created = await api(
      svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('bench-ctl', remote.url, makeRsaCert().certPem),
    );
    const done = await untilTerminal(svc.base, created.json.id, 120_000);
    if (done.status !== 'succeeded') throw new Error(`run ${created.json.id} ${done.status}: ${done.message}`);
    const keyFile = join(tempDir('bench-ctl-key'), 'key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    // The machine's environment (PATH for `#!/usr/bin/env node`) plus what an operator's shell would export.
    const env = {
      ...process.env,
      SCAFFOLDER_URL: svc.base,
      SCAFFOLDER_API_KEY_FILE: keyFile,
      NATS_URL: nats.url,
    };
    const commands: Record<string, string[]> = {
      'node -e 0': ['-e', '0'],
      'scaffolderctl --version': [CTL, '--version'],
      'scaffolderctl get RUN': [CTL, 'get', created.json.id],
      'scaffolderctl list': [CTL, 'list'],
      'scaffolderctl events RUN': [CTL, 'events', created.json.id],
      'scaffolderctl stream-info': [CTL, 'stream-info'],
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
    for (let i = 0; i < ROUNDS; i++)
      for (const [name, argv] of Object.entries(commands)) times[name].push(await seconds(argv, env));
    const baseline = median(times['node -e 0']);
    console.log(
      JSON.stringify(
        {
          node: process.version,
          rounds: ROUNDS,
          median_s: Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, round(median(xs), 3)])),
          max_s: Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, round(Math.max(...xs), 3)])),
          ratio_to_node_e_0: Object.fromEntries(
            Object.entries(times).map(([name, xs]) => [name, round(median(xs) / baseline, 1)]),
          ),
        },
        null,
        2,
      ),
    );
  } finally {
    await svc.stop();
    await nats.destroy();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
