import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { HelperProcess } from '#libs/git';
import { eventually, processesWith } from '../support/listeners';

jest.setTimeout(60_000);

/** A program that starts a child and waits: both command lines carry `marker`, so both can be looked for. */
const parentAndChild = (marker: string) => [
  '-c',
  `node -e 'setTimeout(() => {}, 300000)' ${marker}-child & wait`,
  marker,
];

const DIST_GIT = join(__dirname, '../../dist/libs/git/src');

describe('programs started by the helper process end with their request, and with the helper', () => {
  it('an aborted call kills the program and its child, and rejects with ABORT_ERR', async () => {
    const helper = new HelperProcess();
    const marker = `helper-abort-${Date.now()}`;
    const abort = new AbortController();
    const running = helper.call({ kind: 'exec', file: 'sh', args: parentAndChild(marker), options: {} }, abort.signal);
    expect(
      await eventually(() => processesWith(`${marker}-child`).some((p) => p.command.startsWith('node ')), 10_000),
    ).toBe(true);
    abort.abort();
    await expect(running).rejects.toMatchObject({ code: 'ABORT_ERR' });
    expect(await eventually(() => processesWith(marker).length === 0, 5_000)).toBe(true);
    // The helper itself goes on serving.
    expect((await helper.call({ kind: 'exec', file: 'echo', args: ['still here'], options: {} })).stdout).toBe(
      'still here\n',
    );
  });

  it.each(['SIGTERM', 'its parent thread ending'])('the helper kills the groups it started on %s', async (how) => {
    const marker = `helper-stop-${how.replace(/\W/g, '')}-${Date.now()}`;
    if (how === 'SIGTERM') {
      const helper = new HelperProcess();
      const running = helper
        .call({ kind: 'exec', file: 'sh', args: parentAndChild(marker), options: {} })
        .catch((e) => e);
      expect(
        await eventually(() => processesWith(`${marker}-child`).some((p) => p.command.startsWith('node ')), 10_000),
      ).toBe(true);
      process.kill(helper.pid!, 'SIGTERM');
      expect(await running).toBeInstanceOf(Error);
    } else {
      // A worker thread owns its helper (an IPC channel belongs to its thread): ending the thread is its parent going away.
      const worker = new Worker(
        `const { execInHelper } = require(${JSON.stringify(DIST_GIT)});
         execInHelper('sh', ${JSON.stringify(parentAndChild(marker))}).catch(() => undefined);`,
        { eval: true },
      );
      expect(
        await eventually(() => processesWith(`${marker}-child`).some((p) => p.command.startsWith('node ')), 10_000),
      ).toBe(true);
      await worker.terminate();
    }
    expect(await eventually(() => processesWith(marker).length === 0, 5_000)).toBe(true);
  });
});
