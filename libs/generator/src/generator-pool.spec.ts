import { cpSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GeneratorInputError } from './errors';
import { generate, SHIPPED_TEMPLATE } from './generate';
import { GeneratorPool } from './generator-pool';
import type { GenerateOptions } from './context';

/** The nice value of one of this process's threads (field 19 of /proc/self/task/<tid>/stat). */
function niceOf(tid: string | number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}
const threadNiceValues = () => readdirSync('/proc/self/task').map(niceOf);

describe('GeneratorPool: passes in worker threads at a lower CPU priority', () => {
  const pool = new GeneratorPool({ threads: 2, niceIncrement: 7 });
  afterAll(() => pool.close());
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir: SHIPPED_TEMPLATE,
    clusterName: 'pool-test',
    domain: 'pool.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@pool.example.com',
    pass: 'infra',
    validate: false,
    ...extra,
  });

  it('writes the same tree as a pass on the calling thread, from a worker niced by the increment', async () => {
    const inWorker = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    const here = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    const [fromPool, fromHere] = await Promise.all([pool.generate(options(inWorker)), generate(options(here))]);
    expect(fromPool.summary).toEqual(fromHere.summary);
    expect(readdirSync(join(inWorker, 'clusters/pool-test')).sort()).toEqual(
      readdirSync(join(here, 'clusters/pool-test')).sort(),
    );
    expect(threadNiceValues()).toContain(7);
    expect(niceOf(process.pid)).toBe(0); // the main thread (its id is the process's) keeps its priority
  });

  it("reports each worker thread's heap (the process's own figures are the main thread's)", async () => {
    await pool.generate(options(mkdtempSync(join(tmpdir(), 'gs-pool-'))));
    const heaps = await pool.threadHeaps();
    expect(heaps.length).toBeGreaterThanOrEqual(1);
    for (const heap of heaps) expect(heap.total).toBeGreaterThanOrEqual(heap.used);
    // The thread that ran the pass holds the generator's modules: a bare worker's heap holds about 4.4 MiB (Node 26).
    expect(Math.max(...heaps.map((h) => h.used))).toBeGreaterThan(8 * 1024 * 1024);
  });

  it('keeps the error classes the steps decide on (bad input is not retried)', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    cpSync(SHIPPED_TEMPLATE, repo, { recursive: true });
    const failure = await pool.generate(options(repo, { referenceEnv: 'nope' })).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorInputError);
    expect(failure.message).toContain('reference environment "nope" does not exist');
  });

  it('an aborted preview rejects at once (its thread is stopped), and the pool goes on', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    const abort = new AbortController();
    const started = Date.now();
    const running = pool.preview(options(repo, { validate: true }), abort.signal);
    setTimeout(() => abort.abort(), 20);
    await expect(running).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await pool.preview(options(mkdtempSync(join(tmpdir(), 'gs-pool-'))))).summary.cluster_name).toBe(
      'pool-test',
    );
  });

  it("an aborted pass (a run's step past its deadline) rejects at once (its thread and kustomize are stopped), and the pool goes on", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    const abort = new AbortController();
    const started = Date.now();
    const running = pool.generate(options(repo, { validate: true }), abort.signal);
    setTimeout(() => abort.abort(), 20);
    await expect(running).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await pool.generate(options(mkdtempSync(join(tmpdir(), 'gs-pool-'))))).summary.cluster_name).toBe(
      'pool-test',
    );
  });
});
