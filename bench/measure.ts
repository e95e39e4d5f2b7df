import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { JetStreamEventStore } from '#libs/event-store';
import { summariseFolder } from './profile-summary';

/** Seconds a piece of work takes, and its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const t = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - t) / 1e9 };
}

/** Replay as `scaffolderctl replay --from-seq 1` does it: every event read, parsed, upcast and validated, through one reader. Returns the count. */
export function replayAll(store: JetStreamEventStore): Promise<number> {
  return store.scan({ fromSeq: 1 }, async () => undefined);
}

/** Clock ticks per second of /proc/stat's CPU times (USER_HZ: 100 on Linux builds for every architecture Node ships). */
const USER_HZ = 100;

/** The machine's CPU time so far, from /proc/stat's first line: seconds busy (all but idle and iowait) and idle, over all cores. */
function machineCpuSeconds(): { busy: number; idle: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: (user + nice + system + irq + softirq + steal) / USER_HZ, idle: (idle + iowait) / USER_HZ };
}

/**
 * How busy the whole machine was from this call until the returned function is called: CPU seconds busy and idle
 * over all cores, and the busy share. Tells a phase bound by CPU (busy near 100 %) from one waiting on hand-offs.
 */
export function machineCpuMeter(): () => { busy_cpu_s: number; idle_cpu_s: number; busy_percent: number } {
  const start = machineCpuSeconds();
  return () => {
    const end = machineCpuSeconds();
    const busy = end.busy - start.busy;
    const idle = end.idle - start.idle;
    return {
      busy_cpu_s: Math.round(busy * 10) / 10,
      idle_cpu_s: Math.round(idle * 10) / 10,
      busy_percent: Math.round((busy / (busy + idle)) * 1000) / 10,
    };
  };
}

/** A process's main thread's scheduler figures so far (schedstat: ns on a core, ns runnable waiting for one, slices). */
function mainThreadSchedstat(pid: number): { ran: number; waited: number; slices: number } | undefined {
  try {
    const [ran, waited, slices] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return { ran, waited, slices };
  } catch {
    return undefined; // no such thread any more, or a kernel without schedstats
  }
}

/**
 * How long a process's main thread ran and how long it was runnable but waiting for a core, from this call until the
 * returned function is called (call it while the process lives). On busy cores a thread that answers requests waits
 * before each piece of work: this is that wait, which no change to the thread's own code shortens.
 */
export function mainThreadCpuWaitMeter(
  pid: number,
): () => { ran_s: number; waited_for_core_s: number; wait_per_slice_ms: number } | null {
  const start = mainThreadSchedstat(pid);
  return () => {
    const end = mainThreadSchedstat(pid);
    if (!start || !end) return null;
    const slices = Math.max(1, end.slices - start.slices);
    return {
      ran_s: Math.round((end.ran - start.ran) / 1e8) / 10,
      waited_for_core_s: Math.round((end.waited - start.waited) / 1e8) / 10,
      wait_per_slice_ms: Math.round((end.waited - start.waited) / slices / 1e4) / 100,
    };
  };
}

/** BENCH_PROFILE=<folder>: node options that make the service process write V8 CPU profiles there (one per thread) when it exits. */
export function profilingArgs(): string[] {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return [];
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`];
}

/** Where the profiled process's CPU time went (after it exited), when BENCH_PROFILE was set. */
export function profileReport(): object {
  const dir = process.env.BENCH_PROFILE;
  return dir ? { cpu_profile_by_thread: summariseFolder(dir) } : {};
}

/**
 * A memory cgroup limited to `limitMiB` (as a pod's memory limit is), for a process to start in: Node sizes each
 * isolate's heap from the limit it starts under (on this 24 GiB host without one, a 64 MiB new space per isolate; in
 * 512 MiB, 8 MiB and a 268 MiB heap limit), so memory is measured as a pod would run. cgroup v2 or v1; root only.
 */
export function memoryCgroup(
  limitMiB: number,
  /** Told apart from the benchmark's other cgroups (one per pod it stands for). */
  pod = 'service',
): { procs: string; oomKills: () => number; remove: () => Promise<void> } {
  const bytes = String(limitMiB * 1024 * 1024);
  const name = `gitops-scaffolder-bench-${process.pid}-${pod}`;
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const dir = v2 ? join('/sys/fs/cgroup', name) : join('/sys/fs/cgroup/memory', name);
  mkdirSync(dir);
  writeFileSync(join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), bytes);
  const oomKills = () => {
    const text = readFileSync(join(dir, v2 ? 'memory.events' : 'memory.oom_control'), 'utf8');
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  // Removed once its processes are gone (a cgroup with processes cannot be): the programs the service
  // started (kubectl, git, its helpers) may take a moment to exit after it, so this waits up to 10 s.
  const remove = async () => {
    for (let waited = 0; waited < 10_000; waited += 200) {
      if (readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() === '') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    try {
      rmdirSync(dir);
    } catch (e) {
      console.error(`the benchmark's memory cgroup ${dir} was left (a process of the service still in it?): ${e}`);
    }
  };
  return { procs: join(dir, 'cgroup.procs'), oomKills, remove };
}

/** A process's (every thread's) CPU list, as taskset prints it (`0-1`), or undefined when it cannot be read or set. */
function affinityOf(pid: number): string | undefined {
  try {
    return /: (\S+)\s*$/.exec(
      execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8', stdio: 'pipe' }),
    )?.[1];
  } catch {
    return undefined; // gone, or a kernel thread
  }
}

function setAffinity(pid: number, cpus: string): void {
  try {
    execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
  } catch {
    // a process that exited meanwhile, or a kernel thread bound to its core: nothing to move
  }
}

const processIds = () =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);

/**
 * A core of its own for one process, as a pod with a whole-CPU request gets under Kubernetes' static CPU manager
 * (the core leaves the shared pool): `pid` on core 0 and every other process of the machine (this benchmark and what
 * it started, NATS, PostgreSQL, anything else running) on the other cores. `restore` gives each process its CPU list
 * back, and every core to those started meanwhile (they inherited the narrowed list). Root only; at least two cores.
 */
export function coreOfItsOwn(pid: number): { restore: () => void } {
  const cores = availableParallelism();
  if (cores < 2) throw new Error(`BENCH_TOPOLOGY=split-pinned needs two cores or more; this machine has ${cores}`);
  const all = `0-${cores - 1}`;
  const rest = cores === 2 ? '1' : `1-${cores - 1}`;
  const before = new Map<number, string>();
  for (const other of processIds()) {
    if (other === pid) continue;
    const cpus = affinityOf(other);
    if (cpus === undefined) continue;
    before.set(other, cpus);
    setAffinity(other, rest);
  }
  setAffinity(pid, '0');
  return {
    restore: () => {
      for (const other of processIds())
        if (affinityOf(other) !== undefined) setAffinity(other, before.get(other) ?? all);
    },
  };
}
