import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JetStreamEventStore } from '../libs/event-store/src';
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
