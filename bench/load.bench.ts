/**
 * Load: BENCH_RUNS (200) runs submitted at once into BENCH_REPOS (20; 1 for one fleet repository)
 * local bare repositories, with GET status at a fixed rate over REST and NATS while they progress.
 * Reports runs per minute, p50/p99 time to terminal, the service's peak memory (VmHWM of its process),
 * the throughput against plain git + kustomize doing the same work with the same parallelism, the
 * event append rate and the projection delay; beside the GETs' times, what they waited for (the service's own
 * timing of them, its event-loop delay, and how long its main thread and this benchmark's waited for a core).
 * Run: npm run bench:load (BENCH_SERVICE_ENV, BENCH_NODE_ARGS and BENCH_PLAIN=0 for comparing the service's settings)
 *
 * BENCH_EXECUTOR=kubernetes: the service as a cluster runs it, each run's steps in a Job (a runner process started
 * for each Job the service creates in a fake API server, BENCH_JOBS_PARALLEL at once, at a lower CPU priority as
 * Jobs on other nodes would not take the service's cores); the service serves the APIs, projects and runs the Jobs.
 * BENCH_TOPOLOGY=split: two replicas, one answering the controller (SERVICE_ROLE=api), one doing the runs' work
 * (SERVICE_ROLE=worker), each in a memory cgroup of its own when BENCH_MEMORY_LIMIT_MIB is set.
 * BENCH_TOPOLOGY=split-pinned: the same, the API replica alone on core 0 (a pod with a core of its own) and every
 * other process of the machine (the worker, NATS, PostgreSQL, git, kubectl, this benchmark) on the other cores.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { makeRsaCert } from '../test/support/certs';
import { bareRepo, TestDatabase, TestNats } from '../test/support/services';
import { tempDir } from '../test/support/files';
import { api, API_KEY } from '../test/support/service';
import { ServiceProcess } from '../test/support/service-process';
import { FakeKube } from '../test/support/fake-kube';
import { LocalKubelet } from '../test/support/runner-job';
import {
  coreOfItsOwn,
  machineCpuMeter,
  mainThreadCpuWaitMeter,
  memoryCgroup,
  profileReport,
  profilingArgs,
} from './measure';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const REPOS = Number(process.env.BENCH_REPOS ?? 20);
const GET_RATE = Number(process.env.BENCH_GET_RATE ?? 20);
const EXECUTOR = process.env.BENCH_EXECUTOR === 'kubernetes' ? 'kubernetes' : 'local';
/** Runner Jobs at once (kubernetes executor): the plain tools' and the local steps' parallelism. */
const JOBS_PARALLEL = Number(process.env.BENCH_JOBS_PARALLEL ?? 4);
/**
 * `split`: an API replica (SERVICE_ROLE=api) answers the controller, a worker replica does the runs' work;
 * `split-pinned`: the same with the API replica on a core of its own.
 */
const TOPOLOGY = (['split', 'split-pinned'] as const).find((t) => t === process.env.BENCH_TOPOLOGY) ?? 'one';
const SPLIT = TOPOLOGY !== 'one';
/** BENCH_MEMORY_LIMIT_MIB=512: each replica in a memory cgroup of that size, as in a pod with the chart's limit. */
const MEMORY_LIMIT_MIB = process.env.BENCH_MEMORY_LIMIT_MIB ? Number(process.env.BENCH_MEMORY_LIMIT_MIB) : undefined;
const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** A figure of /proc/PID/status in MiB (NaN when the status lacks it: a process that died, not yet reaped). */
const statusMiB = (status: string, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;

function peakRssMiB(pid: number): number {
  return statusMiB(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmHWM');
}

/** How long the started service is left alone before its resident size at rest is read (start-up's garbage settles). */
const IDLE_SETTLE_MS = 5_000;

/** A gauge's value from Prometheus text (the first series of that name that matches `labels`). */
function gauge(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || l.startsWith(`${name}${labels}{`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

/**
 * Where the service's memory is when its resident size is highest: every second its VmRSS, and at each new
 * high the V8 heaps of the main thread and of the generator's worker threads (its /metrics); the rest is code,
 * stacks and native memory.
 */
function sampleMemory(pid: number, metricsUrl: string, started: number, onMetrics?: (text: string) => void) {
  const mib = (bytes: number) => round(bytes / 1048576);
  let high: Record<string, number> = { rss_mib: 0 };
  const timer = setInterval(() => {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return; // the service has exited (e.g. killed at its memory limit): the run's outcome says so
    }
    const rss = statusMiB(status, 'VmRSS');
    if (!(rss > high.rss_mib)) return; // also a status without VmRSS
    high = {
      rss_mib: round(rss),
      rss_anon_mib: round(statusMiB(status, 'RssAnon')),
      // Pages of files (the node binary: about 34 MiB of a bare node's 42), shared and reclaimable.
      rss_file_mib: round(statusMiB(status, 'RssFile')),
      at_s: round((Date.now() - started) / 1000),
    };
    const at = high;
    void fetch(metricsUrl)
      .then((r) => r.text())
      .then(
        (text) => {
          onMetrics?.(text);
          Object.assign(at, {
            main_heap_total_mib: mib(gauge(text, 'nodejs_heap_size_total_bytes')),
            main_heap_used_mib: mib(gauge(text, 'nodejs_heap_size_used_bytes')),
            main_new_space_mib: mib(gauge(text, 'nodejs_heap_space_size_total_bytes', '{space="new"}')),
            main_external_mib: mib(gauge(text, 'nodejs_external_memory_bytes')),
            generator_threads_heap_total_mib: mib(gauge(text, 'scaffold_generator_heap_bytes', '{kind="total"}')),
            generator_threads_heap_used_mib: mib(gauge(text, 'scaffold_generator_heap_bytes', '{kind="used"}')),
          });
        },
        () => undefined,
      );
  }, 1000);
  return { stop: () => clearInterval(timer), atHigh: () => high };
}

/**
 * The service's event-loop delay while the load runs: every 5 s its /metrics, whose `nodejs_eventloop_lag_*` gauges
 * (prom-client) cover the delays since the previous scrape. prom-client's monitor has a 10 ms resolution, so an idle
 * loop reads about 10 ms: the figures are how late a 10 ms timer fired, not the delay added to it. Every other scrape
 * of the same process must be recorded too (`record`): each one starts a new window.
 */
function sampleEventLoopDelay(metricsUrl: string) {
  const windows: Array<{ p99: number; max: number }> = [];
  const record = (text: string) => {
    const ms = (name: string) => gauge(text, name) * 1000;
    windows.push({ p99: ms('nodejs_eventloop_lag_p99_seconds'), max: ms('nodejs_eventloop_lag_max_seconds') });
  };
  const timer = setInterval(() => {
    void fetch(metricsUrl)
      .then((r) => r.text())
      .then(record, () => undefined);
  }, 5000);
  return {
    record,
    stop: () => clearInterval(timer),
    summary: () => {
      const p99s = windows.map((w) => w.p99);
      return {
        windows: windows.length,
        p99_median_window_ms: round(pct(p99s, 50), 1),
        p99_worst_window_ms: round(Math.max(...p99s), 1),
        max_ms: round(Math.max(...windows.map((w) => w.max)), 1),
      };
    },
  };
}

/** Where in the load the slowest 1% of GETs were: how many fell in each window of `seconds` (keyed by its start). */
function slowestByWindow(gets: Array<{ at: number; ms: number }>, seconds: number): Record<string, number> {
  const slowest = [...gets].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(gets.length / 100));
  const counts: Record<string, number> = {};
  for (const { at } of slowest) {
    const window = `${Math.floor(at / seconds) * seconds} s`;
    counts[window] = (counts[window] ?? 0) + 1;
  }
  return counts;
}

/** The main thread's garbage collection during the load, by kind (prom-client's histogram): seconds and collections. */
function mainThreadGc(text: string): Record<string, { seconds: number; count: number }> {
  const sums = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="([^"]+)"\} (\S+)/gm)];
  return Object.fromEntries(
    sums.map(([, kind, seconds]) => [
      kind,
      {
        seconds: round(Number(seconds), 2),
        count: gauge(text, 'nodejs_gc_duration_seconds_count', `{kind="${kind}"}`),
      },
    ]),
  );
}

/**
 * A histogram's cumulative buckets from Prometheus text; `labels` (e.g. `,route="GET /x"`) picks one series, written
 * as they stand after `le` in prom-client's output.
 */
function cumulativeBuckets(text: string, name: string, labels = ''): Array<{ le: string; count: number }> {
  const escaped = labels.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"${escaped}\\} (\\d+)`, 'gm'))].map((m) => ({
    le: m[1],
    count: Number(m[2]),
  }));
}

/** Histogram quantile from Prometheus text (upper bound of the bucket holding the quantile). */
function histogramQuantile(text: string, name: string, q: number, labels = ''): number {
  const buckets = cumulativeBuckets(text, name, labels).map((b) => ({
    le: b.le === '+Inf' ? Infinity : Number(b.le),
    count: b.count,
  }));
  const total = buckets[buckets.length - 1]?.count ?? 0;
  return buckets.find((b) => b.count >= q * total)?.le ?? NaN;
}

/** A histogram's buckets as `{ "≤ le": count in that bucket }` (not cumulative), to see where a tail sits. */
function histogramBuckets(text: string, name: string, labels = ''): Record<string, number> {
  const cumulative = cumulativeBuckets(text, name, labels);
  return Object.fromEntries(
    cumulative.map((b, i) => [`≤ ${b.le}`, b.count - (cumulative[i - 1]?.count ?? 0)]).filter(([, n]) => n !== 0),
  );
}

/** How long the service took for the benchmark's GETs by id, by its own histogram: p50/p99 bucket bounds and buckets. */
function serviceGetTimes(text: string) {
  const name = 'scaffold_api_request_duration_seconds';
  const series = {
    rest: ',transport="http",route="GET /api/v1/scaffolds/:id",status="200"',
    nats: ',transport="nats",route="scaffolds.v1.get",status="200"',
  };
  return Object.fromEntries(
    Object.entries(series).map(([api, labels]) => [
      api,
      {
        p50_le_s: histogramQuantile(text, name, 0.5, labels),
        p99_le_s: histogramQuantile(text, name, 0.99, labels),
        buckets: histogramBuckets(text, name, labels),
      },
    ]),
  );
}

/**
 * Per step: attempts, the seconds they took together, and how many were at work on average over `wallSeconds`
 * (their summed duration over the wall time): which step the runs wait in, and whether the step concurrency is used.
 */
function stepsAtWork(
  text: string,
  wallSeconds: number,
): Record<string, { attempts: number; busy_s: number; in_flight_avg: number }> {
  const steps: Record<string, { attempts: number; busy_s: number; in_flight_avg: number }> = {};
  const series = /^scaffold_step_duration_seconds_(sum|count)\{step="([^"]+)",outcome="[^"]+"\} ([\d.e+-]+)$/gm;
  for (const [, kind, step, value] of text.matchAll(series)) {
    const s = (steps[step] ??= { attempts: 0, busy_s: 0, in_flight_avg: 0 });
    if (kind === 'count') s.attempts += Number(value);
    else s.busy_s += Number(value);
  }
  for (const s of Object.values(steps)) {
    s.in_flight_avg = round(s.busy_s / wallSeconds, 2);
    s.busy_s = round(s.busy_s);
  }
  return steps;
}

/** The service's warnings and errors (pino JSON lines, level ≥ 40) counted by message, with one example of each. */
function warningsByMessage(output: string): Record<string, { count: number; example: string }> {
  const counts: Record<string, { count: number; example: string }> = {};
  for (const line of output.split('\n')) {
    let entry: { level?: number; msg?: string };
    try {
      entry = JSON.parse(line);
    } catch {
      continue; // not a log line (or one cut short at the end of the output)
    }
    if ((entry.level ?? 0) < 40) continue;
    const key = entry.msg ?? '?';
    counts[key] = { count: (counts[key]?.count ?? 0) + 1, example: counts[key]?.example ?? line.slice(0, 400) };
  }
  return counts;
}

const exec = promisify(execFile);
/** Plain tools work with the same parallelism as the service's steps. */
const PLAIN_PARALLEL = Number(process.env.BENCH_PLAIN_PARALLEL ?? 4);
const INFRA_LAYERS = ['flux-system', 'infrastructure'];
const ALL_LAYERS = ['flux-system', 'infrastructure', 'apps', 'database', 'cert-manager-config'];

/**
 * The same work as the service's runs with plain tools, PLAIN_PARALLEL runs at a time: per run and
 * pass, clone, write the layers, `kubectl kustomize` each, commit, push (a push the branch moved under
 * is rebased and pushed again, as a script would). Returns the wall time.
 */
async function plainTools(remotes: string[], tree: string): Promise<number> {
  const start = Date.now();
  const git = (cwd: string, ...a: string[]) =>
    exec('git', ['-C', cwd, '-c', 'user.name=b', '-c', 'user.email=b@x', ...a]);
  const oneRun = async (i: number) => {
    for (const layers of [INFRA_LAYERS, ALL_LAYERS]) {
      const wc = mkdtempSync(join(tmpdir(), 'plain-'));
      // --no-local: a local clone hardlinks objects, and a push landing meanwhile can make git refuse them.
      await exec('git', [
        'clone',
        '-q',
        '--no-local',
        '--branch',
        'main',
        '--single-branch',
        remotes[i % remotes.length],
        wc,
      ]);
      for (const l of layers) cpSync(join(tree, l), join(wc, 'clusters', `plain-${i}`, l), { recursive: true });
      for (const l of layers)
        await exec('kubectl', ['kustomize', join(wc, 'clusters', `plain-${i}`, l)], { maxBuffer: 64 * 1024 * 1024 });
      await git(wc, 'add', '-A');
      await git(wc, 'commit', '-q', '-m', `plain ${i}`);
      for (let attempt = 1; ; attempt++) {
        try {
          await git(wc, 'push', '-q', 'origin', 'HEAD:main');
          break;
        } catch (e) {
          if (attempt >= 100) throw e;
          await git(wc, 'pull', '-q', '--rebase', 'origin', 'main');
        }
      }
      rmSync(wc, { recursive: true, force: true });
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: PLAIN_PARALLEL }, async () => {
      while (next < RUNS) await oneRun(next++);
    }),
  );
  return Date.now() - start;
}

async function main() {
  const limit = MEMORY_LIMIT_MIB ? memoryCgroup(MEMORY_LIMIT_MIB) : undefined;
  const nats = await TestNats.start();
  const db = await TestDatabase.create();
  const management = EXECUTOR === 'kubernetes' ? await new FakeKube().start() : undefined;
  const svc = await ServiceProcess.create(
    {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      ...(management ? { EXECUTOR: 'kubernetes', KUBECONFIG: management.kubeconfigFile() } : {}),
      ...(SPLIT ? { SERVICE_ROLE: 'worker' } : {}),
      STEP_CONCURRENCY: '4',
      ACK_WAIT_SECONDS: '30',
      LOG_LEVEL: 'warn',
      // One controller submitting the whole load: the per-key quotas would otherwise refuse most of it (429).
      MAX_CREATES_PER_MINUTE_PER_KEY: String(RUNS),
      MAX_ACTIVE_RUNS_PER_KEY: String(RUNS),
      // BENCH_SERVICE_ENV='{"GENERATOR_THREADS":"1"}': the same load with other settings (e.g. to see what holds memory).
      ...(JSON.parse(process.env.BENCH_SERVICE_ENV ?? '{}') as Record<string, string>),
    },
    [...profilingArgs(), ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
    limit?.procs,
  );
  await svc.start();
  // BENCH_TOPOLOGY=split: the controller's creates and GETs go to a replica of its own (SERVICE_ROLE=api, a pod of its own).
  const apiLimit = SPLIT && MEMORY_LIMIT_MIB ? memoryCgroup(MEMORY_LIMIT_MIB, 'api') : undefined;
  const apiReplica = SPLIT
    ? await ServiceProcess.create(
        { ...svc.env, SERVICE_ROLE: 'api', WORK_DIR: tempDir('api-work') },
        profilingArgs(),
        apiLimit?.procs,
      )
    : undefined;
  await apiReplica?.start();
  const pinned = TOPOLOGY === 'split-pinned' ? coreOfItsOwn(apiReplica!.pid!) : undefined;
  const front = apiReplica ?? svc;
  const exits = () => [...svc.exits, ...(apiReplica?.exits ?? [])];
  const kubelet = management
    ? new LocalKubelet(
        management,
        svc.base,
        {
          ...Object.fromEntries(Object.entries(svc.env).filter(([k]) => /^(REGISTRY_|GIT_ALLOWED_SCHEMES$)/.test(k))),
          KUBECONFIG: management.kubeconfigFile(),
          LOG_LEVEL: 'warn',
        },
        JOBS_PARALLEL,
      ).start()
    : undefined;
  const nc = await connect({ servers: nats.url });
  const cert = makeRsaCert({ bits: 4096 });
  const remotes = Array.from({ length: REPOS }, () => bareRepo());
  const h = headers();
  h.set('X-Api-Key', API_KEY);
  // The service at rest before the load: every module its mode loads at start (the Kubernetes client with Jobs).
  await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
  const idleRss = statusMiB(readFileSync(`/proc/${svc.pid}/status`, 'utf8'), 'VmRSS');
  const started = Date.now();
  const serviceCpu = machineCpuMeter();
  const loopDelay = sampleEventLoopDelay(`${front.base}/metrics`);
  const memory = sampleMemory(svc.pid!, `${svc.base}/metrics`, started, front === svc ? loopDelay.record : undefined);
  // The API's main thread (the one process, or the API replica) and this benchmark's, which times the GETs.
  const serviceWait = mainThreadCpuWaitMeter(front.pid!);
  const benchmarkWait = mainThreadCpuWaitMeter(process.pid);
  try {
    // Each create carries an Idempotency-Key, so one whose connection dropped can be sent again without a second run.
    const create = async (i: number) => {
      const request = {
        cluster_name: `load-${i}`,
        domain: `l${i}.example.com`,
        region: 'eu-west-1',
        acme_email: 'ops@example.com',
        repo: { url: remotes[i % REPOS].url, branch: 'main' },
        target: { sealing_cert_pem: cert.certPem },
      };
      for (let attempt = 1; ; attempt++) {
        try {
          return await api(front.base, 'POST', '/api/v1/scaffolds', request, { 'idempotency-key': `load-${i}` });
        } catch (e) {
          if (attempt >= 5) throw e;
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
    };
    const created = await Promise.all(Array.from({ length: RUNS }, (_, i) => create(i)));
    const refused = created.filter((c) => c.status !== 202 && c.status !== 200);
    if (refused.length > 0)
      throw new Error(`${refused.length} of ${RUNS} creates were refused: ${JSON.stringify(refused[0].json)}`);
    const ids = created.map((c) => c.json.id as string);
    const finishedAt = new Map<string, { at: number; status: string }>();
    /** Each GET answered: over which API, when it was sent (seconds into the load) and how long it took. */
    const gets: Array<{ api: 'rest' | 'nats'; at: number; ms: number }> = [];
    const timer = (api: 'rest' | 'nats') => {
      const at = (Date.now() - started) / 1000;
      const t = process.hrtime.bigint();
      return () => void gets.push({ api, at, ms: Number(process.hrtime.bigint() - t) / 1e6 });
    };
    /** How long each of the benchmark's lists of 500 runs took (it polls them for the runs' ends). */
    const lists: number[] = [];
    let probe = 0;
    const getter = setInterval(() => {
      const id = ids[probe++ % ids.length];
      // void, both probes: they keep a fixed rate; waiting for an answer would slow the next probe down.
      const restDone = timer('rest');
      void api(front.base, 'GET', `/api/v1/scaffolds/${id}`).then(restDone);
      const natsDone = timer('nats');
      void nc
        .request('scaffolds.v1.get', JSON.stringify({ id }), { headers: h, timeout: 10_000 })
        .then(natsDone, () => undefined);
    }, 1000 / GET_RATE);
    // Until every run ended, 30 min passed, or the service died (at a memory limit, its exit is in the output).
    while (finishedAt.size < RUNS && Date.now() - started < 30 * 60_000 && exits().length === 0) {
      const listed = process.hrtime.bigint();
      const page = await api(front.base, 'GET', '/api/v1/scaffolds?limit=500');
      lists.push(Number(process.hrtime.bigint() - listed) / 1e6);
      for (const r of page.json?.items ?? [])
        if (['succeeded', 'failed', 'cancelled'].includes(r.status) && !finishedAt.has(r.id))
          finishedAt.set(r.id, { at: Date.parse(r.finished_at), status: r.status });
      await new Promise((r) => setTimeout(r, 500));
    }
    clearInterval(getter);
    loopDelay.stop();
    const machineDuringService = serviceCpu();
    const mainThreadsWaiting = { service: serviceWait(), benchmark: benchmarkWait() };
    const restTimes = gets.filter((g) => g.api === 'rest').map((g) => g.ms);
    const natsTimes = gets.filter((g) => g.api === 'nats').map((g) => g.ms);
    if (exits().length > 0)
      throw new Error(
        `the service exited (${exits().join(', ')}) after ${finishedAt.size} runs ended; OOM kills in its memory cgroup: ${limit?.oomKills() ?? 'no cgroup'}`,
      );
    const wall = (Math.max(...[...finishedAt.values()].map((f) => f.at)) - started) / 1000;
    const times = ids.filter((id) => finishedAt.has(id)).map((id) => (finishedAt.get(id)!.at - started) / 1000);
    const metrics = await (await fetch(`${svc.base}/metrics`)).text();
    const frontMetrics = front === svc ? metrics : await (await fetch(`${front.base}/metrics`)).text();
    const events = Number(/^scaffold_stream_last_seq (\d+)/m.exec(metrics)?.[1] ?? 0);
    const peak = peakRssMiB(svc.pid!);
    // The worker's figures are the service's above; the API replica's (split) are these.
    const apiReplicaFigures = apiReplica && {
      peak_rss_mib: round(peakRssMiB(apiReplica.pid!)),
      main_thread_gc: mainThreadGc(await (await fetch(`${apiReplica.base}/metrics`)).text()),
      warnings: warningsByMessage(apiReplica.output),
    };
    const failed = ids.find((id) => finishedAt.get(id)?.status !== 'succeeded');
    if (failed) {
      // The baseline needs a run's tree; and a failed run is a finding, not a figure.
      const view = await api(front.base, 'GET', `/api/v1/scaffolds/${failed}`);
      throw new Error(
        `run ${failed} did not succeed: ${JSON.stringify(view.json)}${kubelet?.failures[0]?.output ?? ''}`,
      );
    }

    const tree = mkdtempSync(join(tmpdir(), 'tree-'));
    execFileSync('git', ['clone', '-q', remotes[0].dir, tree]);
    // The plain tools' repositories start as the service's did after its first run: with the shared base it copied in.
    const plainRemotes = Array.from({ length: REPOS }, () => bareRepo().dir);
    const seed = mkdtempSync(join(tmpdir(), 'seed-'));
    execFileSync('git', ['init', '-q', '-b', 'main', seed]);
    cpSync(join(tree, 'base'), join(seed, 'base'), { recursive: true });
    execFileSync('git', ['-C', seed, '-c', 'user.name=b', '-c', 'user.email=b@x', 'add', '-A']);
    execFileSync('git', ['-C', seed, '-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-q', '-m', 'shared base']);
    for (const remote of plainRemotes) execFileSync('git', ['-C', seed, 'push', '-q', '--force', remote, 'main']);
    // Printed before the baseline runs, so a failing baseline never loses the service's figures.
    console.error(
      `service: ${finishedAt.size} finished in ${round(wall)} s; GET p99 REST ${round(pct(restTimes, 99), 2)} ms, NATS ${round(pct(natsTimes, 99), 2)} ms; peak ${round(peak)} MiB`,
    );
    // The baseline is the same work on the whole machine, as plain tools would run on it (no core kept for an API).
    pinned?.restore();
    // BENCH_PLAIN=0: the service's figures only (the baseline takes minutes; a settings comparison does not need it).
    const plainCpu = machineCpuMeter();
    const plainMs =
      process.env.BENCH_PLAIN === '0' ? NaN : await plainTools(plainRemotes, join(tree, 'clusters/load-0'));
    const machineDuringPlain = plainCpu();

    console.log(
      JSON.stringify(
        {
          runs: RUNS,
          repositories: REPOS,
          executor: EXECUTOR,
          topology: TOPOLOGY,
          ...(kubelet ? { jobs_parallel: JOBS_PARALLEL, runner_failures: kubelet.failures } : {}),
          finished: finishedAt.size,
          succeeded: [...finishedAt.values()].filter((f) => f.status === 'succeeded').length,
          wall_seconds: round(wall),
          runs_per_minute: round((finishedAt.size / wall) * 60),
          time_to_terminal_s: { p50: round(pct(times, 50)), p99: round(pct(times, 99)) },
          service_idle_rss_mib: round(idleRss),
          service_peak_rss_mib: round(peak),
          service_memory_at_highest_sample: memory.atHigh(),
          memory_limit_mib: MEMORY_LIMIT_MIB ?? null,
          oom_kills: limit?.oomKills() ?? null,
          plain_tools_same_work_seconds: round(plainMs / 1000),
          plain_tools_parallel: PLAIN_PARALLEL,
          throughput_vs_plain_tools: round(plainMs / 1000 / wall, 2),
          // The whole machine's CPU in each phase (service, NATS, PostgreSQL, git, kubectl, the benchmark's own GETs).
          machine_cpu: { service_phase: machineDuringService, plain_tools_phase: machineDuringPlain },
          get_status_ms: {
            rest: { p50: round(pct(restTimes, 50), 2), p99: round(pct(restTimes, 99), 2), n: restTimes.length },
            nats: { p50: round(pct(natsTimes, 50), 2), p99: round(pct(natsTimes, 99), 2), n: natsTimes.length },
            slowest_percent_by_30_s: slowestByWindow(gets, 30),
            // When the ten slowest were sent and what they took: a cluster of them names a moment of the load.
            slowest: [...gets]
              .sort((a, b) => b.ms - a.ms)
              .slice(0, 10)
              .map((g) => ({ api: g.api, at_s: round(g.at, 2), ms: round(g.ms) })),
            // The same GETs as the service timed them (guard to answer, PostgreSQL included): the rest of the time
            // above is the way there and back (sockets, NATS, waiting for a core, the service's event loop).
            in_service: serviceGetTimes(frontMetrics),
            // What else the answers waited for: the service's event loop, and a core for either end's main thread.
            service_event_loop_delay: loopDelay.summary(),
            main_thread_cpu: mainThreadsWaiting,
          },
          list_500_runs_ms: { p50: round(pct(lists, 50), 1), p99: round(pct(lists, 99), 1), n: lists.length },
          events_appended: events,
          append_rate_events_per_s: round(events / wall),
          projection_delay_s: {
            p50_le: histogramQuantile(metrics, 'scaffold_projection_delay_seconds', 0.5),
            p99_le: histogramQuantile(metrics, 'scaffold_projection_delay_seconds', 0.99),
          },
          projection_delay_buckets: histogramBuckets(metrics, 'scaffold_projection_delay_seconds'),
          main_thread_gc: mainThreadGc(metrics),
          steps_at_work: stepsAtWork(metrics, wall),
          service_warnings: warningsByMessage(svc.output),
          ...(apiReplicaFigures ? { api_replica: apiReplicaFigures } : {}),
          // BENCH_GET_SAMPLES=1: every GET's time, so short runs (a 20-run burst: 230 GETs each way) can be pooled.
          ...(process.env.BENCH_GET_SAMPLES ? { get_samples_ms: { rest: restTimes, nats: natsTimes } } : {}),
        },
        null,
        2,
      ),
    );
  } finally {
    pinned?.restore();
    memory.stop();
    loopDelay.stop();
    kubelet?.stop();
    await nc.close();
    // A clean exit: the profiler writes its files then.
    await svc.kill('SIGTERM');
    await apiReplica?.kill('SIGTERM');
    await apiLimit?.remove();
    await limit?.remove();
    await management?.stop();
    await nats.destroy();
    await db.drop();
  }
  if (process.env.BENCH_PROFILE) console.log(JSON.stringify(profileReport(), null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
