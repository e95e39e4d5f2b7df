import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GeneratorInputError } from './errors';
import { generate, SHIPPED_TEMPLATE } from './generate';
import { GeneratorPool, PASSES_PER_THREAD } from './generator-pool';
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
    // The infra pass rehearses the full pass, whose pull secret needs them.
    registry: { server: 'registry.example.com', username: 'puller', password: 'RegistryPassword-1' },
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

  it('an aborted preview rejects at once, and the pool goes on', async () => {
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

  it("an aborted pass (a run's step past its deadline) rejects at once, its kubectl is killed, and the pool goes on", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-pool-'));
    const abort = new AbortController();
    // A cluster of its own: no earlier pass's build is kept for its folders, so it starts kubectl.
    const running = pool.generate(options(repo, { validate: true, clusterName: 'pool-aborted' }), abort.signal);
    // Aborted once its first build runs, so there is a kubectl to kill.
    await waitUntil(() => kubectlsOf(process.pid).length > 0);
    const abortedAt = Date.now();
    abort.abort();
    await expect(running).rejects.toThrow(/abort/i);
    expect(Date.now() - abortedAt).toBeLessThan(2_000);
    expect(kubectlsOf(process.pid)).toEqual([]);
    // It wrote nothing: the plan is applied only by a pass that was not aborted.
    expect(existsSync(join(repo, 'clusters/pool-aborted'))).toBe(false);
    expect((await pool.generate(options(mkdtempSync(join(tmpdir(), 'gs-pool-'))))).summary.cluster_name).toBe(
      'pool-test',
    );
  });
});

describe('GeneratorPool: two passes share a thread', () => {
  const pool = new GeneratorPool({ threads: 1, niceIncrement: 0 });
  afterAll(() => pool.close());

  it(`runs ${PASSES_PER_THREAD} passes at once on one thread, and aborting one leaves the other to finish`, async () => {
    let keptEnded = false;
    const kept = pool.generate(validatedInfraPass('kept')).finally(() => (keptEnded = true));
    const abort = new AbortController();
    const aborted = pool.generate(validatedInfraPass('aborted'), abort.signal);
    const third = pool.generate(validatedInfraPass('third'));
    // Two passes on the thread and only the third waiting, while the first is still at work (one pass per
    // thread would leave two waiting until the first ended).
    await waitUntil(() => pool.waitingPasses === 1);
    expect(keptEnded).toBe(false);
    abort.abort();
    await expect(aborted).rejects.toThrow(/abort/i);
    // The thread was not stopped under the other pass: it ends as if alone.
    expect((await kept).summary.cluster_name).toBe('kept');
    expect((await third).summary.cluster_name).toBe('third');
    await expect(pool.threadHeaps()).resolves.toHaveLength(1);
  });
});

describe('GeneratorPool: a pass aborted while it waits for a thread', () => {
  const pool = new GeneratorPool({ threads: 1, passesPerThread: 1, niceIncrement: 0 });
  afterAll(() => pool.close());

  it('rejects at once, not when a thread frees up, and the pool goes on', async () => {
    let runningEnded = false;
    const running = pool.generate(validatedInfraPass('running')).finally(() => (runningEnded = true));
    const abort = new AbortController();
    const queued = validatedInfraPass('queued');
    const waiting = pool.generate(queued, abort.signal);
    await waitUntil(() => pool.waitingPasses === 1);
    abort.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    expect(runningEnded).toBe(false);
    expect((await running).summary.cluster_name).toBe('running');
    // Taken by the thread later, the aborted pass ended before any work: nothing of it was written.
    expect((await pool.generate(validatedInfraPass('after'))).summary.cluster_name).toBe('after');
    expect(existsSync(join(queued.repoDir, 'clusters/queued'))).toBe(false);
  });
});

/** An infra pass with kustomize builds, for a cluster of its own (no earlier build is kept for it), into a fresh folder. */
function validatedInfraPass(clusterName: string): GenerateOptions {
  return {
    repoDir: mkdtempSync(join(tmpdir(), 'gs-pool-')),
    templateDir: SHIPPED_TEMPLATE,
    clusterName,
    domain: `${clusterName}.example.com`,
    region: 'eu-west-1',
    acmeEmail: 'ops@example.com',
    pass: 'infra',
    registry: { server: 'registry.example.com', username: 'puller', password: 'RegistryPassword-1' },
    validate: true,
  };
}

/** Polls `condition` every 5 ms for up to 10 s. */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (const until = Date.now() + 10_000; !condition(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() > until) throw new Error('condition not met within 10 s');
}

/** The kubectl processes among `pid`'s descendants (a pass's builds run from its thread's helper process). */
function kubectlsOf(pid: number): number[] {
  const found: number[] = [];
  for (const child of childrenOf(pid)) {
    if (commandOf(child) === 'kubectl') found.push(child);
    found.push(...kubectlsOf(child));
  }
  return found;
}

/** A process's children, whichever of its threads started them (the helper is a worker thread's child). */
function childrenOf(pid: number): number[] {
  const tasks = existsSync(`/proc/${pid}/task`) ? readdirSync(`/proc/${pid}/task`) : [];
  return tasks.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return []; // the thread or process ended meanwhile
    }
  });
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}
