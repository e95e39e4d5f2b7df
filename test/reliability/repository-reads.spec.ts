import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { report } from '../support/report';
import { createBody } from '../support/run-fixtures';
import { api, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo } from '../support/services';

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
/** The most the service's memory may grow while it refuses a hostile repository (issue #47). */
const RSS_GROWTH_BOUND = 50 * MiB;
/** How long a refusal of the 100 MB file may take on a busy 2-core machine (main took 65 to 98 s to preview it). */
const REFUSAL_BOUND_MS = 20_000;
/** Small enough for a test to pass it with tiny files; the scaffold itself writes a few dozen. */
const MAX_REPO_FILES = 1000;

/**
 * A tenant's repository is code (issue #47): a link in the tenant's own cluster folder to /dev/zero or
 * /proc/self/environ, a file that packs to kilobytes and checks out to 100 MB, and a checkout of too many
 * files are each refused by name through the real service, by runs and previews alike, before the service
 * reads them (its memory stays where it was).
 */
describe("a tenant's repository is read without following links and within limits", () => {
  const stack = useServiceStack(() => ({ MAX_REPO_FILES: String(MAX_REPO_FILES) }));
  const cert = makeRsaCert();
  const remote = bareRepo();
  const cluster = 'shop';
  const credentials = `clusters/${cluster}/database/postgresql-credentials.yaml`;

  /** Commits what `change` does to a clone of the tenant's repository, and pushes it. */
  function pushChange(message: string, change: (clone: string) => void): void {
    const clone = tempDir('tenant-clone');
    execFileSync('git', ['clone', '-q', remote.dir, clone]);
    change(clone);
    const g = (...a: string[]) =>
      execFileSync('git', ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@x', ...a], { stdio: 'ignore' });
    g('add', '--all');
    g('commit', '-q', '-m', message);
    g('push', '-q', 'origin', 'HEAD:main');
    rmSync(clone, { recursive: true, force: true });
  }

  /** Replaces the cluster's credentials file with a link to `target`. */
  const linkCredentialsTo = (target: string) =>
    pushChange(`credentials link to ${target}`, (clone) => {
      rmSync(join(clone, credentials), { force: true });
      symlinkSync(target, join(clone, credentials));
    });

  /** `work`'s result, and how far the process's resident memory rose above where it was while it ran. */
  async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number; ms: number }> {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const started = Date.now();
    try {
      const result = await work();
      const measured = { result, growth: Math.max(peak, process.memoryUsage().rss) - before, ms: Date.now() - started };
      report(`${expect.getState().currentTestName}: RSS +${(measured.growth / MiB).toFixed(1)} MiB, ${measured.ms} ms`);
      return measured;
    } finally {
      clearInterval(sampler);
    }
  }

  const scaffold = async () => {
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody(cluster, remote.url, cert.certPem),
    );
    expect(created.status).toBe(202);
    return untilTerminal(stack.svc.base, created.json.id);
  };
  const preview = () =>
    api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', createBody(cluster, remote.url, cert.certPem));

  beforeAll(async () => {
    // The tenant's cluster as a first run leaves it: its own folder, with the credentials file the attack replaces.
    expect((await scaffold()).status).toBe('succeeded');
  });

  describe.each(['/dev/zero', '/proc/self/environ'])('a link to %s in the cluster folder', (target) => {
    beforeAll(() => linkCredentialsTo(target));

    it('a re-scaffold fails naming the file, and the memory does not grow', async () => {
      const { result: done, growth } = await peakGrowth(scaffold);
      expect(done.status).toBe('failed');
      expect(done.message).toContain(
        `links that lead out of it, which are never read or written through: ${credentials}`,
      );
      expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    });

    it('a preview is refused (422) naming the file, and the memory does not grow', async () => {
      const { result: answer, growth } = await peakGrowth(preview);
      expect(answer.status).toBe(422);
      expect(answer.json.error.message).toContain(credentials);
      expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    });
  });

  describe('a 100 MB file that packs to kilobytes, where the pass reads', () => {
    beforeAll(() =>
      pushChange('a 100 MB credentials file', (clone) => {
        rmSync(join(clone, credentials), { force: true });
        const fd = openSync(join(clone, credentials), 'w');
        const chunk = Buffer.alloc(MiB, 'a: b\n');
        for (let i = 0; i < 100; i++) writeSync(fd, chunk);
        closeSync(fd);
      }),
    );

    it('a preview is refused in seconds by MAX_REPO_FILE_BYTES, naming the file', async () => {
      const { result: answer, growth, ms } = await peakGrowth(preview);
      expect(answer.status).toBe(422);
      expect(answer.json.error.message).toBe(
        `${credentials}: larger than ${5 * MiB} bytes, the limit MAX_REPO_FILE_BYTES sets for a file of a repository; refusing to read it`,
      );
      expect(ms).toBeLessThan(REFUSAL_BOUND_MS);
      expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    });

    it('a re-scaffold fails the same way', async () => {
      const { result: done, ms } = await peakGrowth(scaffold);
      expect(done.status).toBe('failed');
      expect(done.message).toContain(
        `${credentials}: larger than ${5 * MiB} bytes, the limit MAX_REPO_FILE_BYTES sets`,
      );
      expect(ms).toBeLessThan(REFUSAL_BOUND_MS * 2);
    });
  });

  // In the cluster's folder: a run checks out only the folders its pass needs (a sparse checkout), and these are counted.
  it('a checkout of more files than MAX_REPO_FILES is refused naming the limit, by a preview and a run', async () => {
    pushChange('many small files', (clone) => {
      for (let i = 0; i <= MAX_REPO_FILES; i++) {
        const file = join(clone, 'clusters', cluster, 'notes', `part-${Math.floor(i / 100)}`, `note-${i}.md`);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, `${i}\n`);
      }
    });
    const refusal = `the repository holds more than ${MAX_REPO_FILES} files, the limit MAX_REPO_FILES sets`;
    const { result: answer } = await peakGrowth(preview);
    expect(answer.status).toBe(422);
    expect(answer.json.error.message).toContain(refusal);
    const { result: done } = await peakGrowth(scaffold);
    expect(done.status).toBe('failed');
    expect(done.message).toContain(refusal);
  });
});
