/**
 * Where a process's CPU time went, from the V8 CPU profiles `node --cpu-prof` writes (one per thread):
 * self time by part of the program (our modules by folder, npm packages by name, Node's internals,
 * garbage collection) and the busiest functions. The benchmarks print it when BENCH_PROFILE names a
 * folder; it also runs alone: node dist/bench/profile-summary.js <folder>.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The part of the program a script belongs to: a folder of ours, an npm package, or Node itself. */
function partOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/dist\/((?:libs|src|bench|test)\/[^/]+)/.exec(url);
  if (ours) return ours[1];
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

export interface ThreadProfile {
  file: string;
  busyMs: number;
  idleMs: number;
  byPart: Array<{ part: string; ms: number; share: number }>;
  topFunctions: Array<{ fn: string; ms: number }>;
  longTasks: LongTask[];
}

/** A stretch of the thread busy without a pause: what an answer arriving during it waits for. */
export interface LongTask {
  /** Milliseconds from the profile's start. */
  atMs: number;
  ms: number;
  /** Our functions (libs/src) or packages on the stack the longest within the stretch, with their time. */
  on: Array<{ fn: string; ms: number }>;
}

/** Busy stretches at least this long are listed: a GET's goal is 25 ms, so a stretch of 20 ms spends most of it. */
const LONG_TASK_MS = 20;

const isIdle = (frame: ProfileNode['callFrame']) =>
  frame.functionName === '(idle)' || frame.functionName === 'atomicsWaitLoop';

const label = (frame: ProfileNode['callFrame']) =>
  `${frame.functionName || '(anonymous)'} ${partOf(frame)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;

/**
 * The busy stretches of a thread of at least LONG_TASK_MS, longest first (at most `top`), each with the frames
 * of ours or of a package that were on the stack longest during it (the outermost that is not Node's own).
 */
function longTasks(profile: CpuProfile, byId: Map<number, ProfileNode>, top: number): LongTask[] {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** The frames of a sample's stack worth naming: ours and packages', innermost first. */
  const named = (id: number): string[] => {
    const out: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:')) out.push(label(frame));
    }
    return out;
  };
  const tasks: LongTask[] = [];
  let clock = 0;
  let stretch: { atUs: number; us: number; on: Map<string, number> } | undefined;
  const close = () => {
    if (stretch && stretch.us >= LONG_TASK_MS * 1000)
      tasks.push({
        atMs: Math.round(stretch.atUs / 1000),
        ms: Math.round(stretch.us / 100) / 10,
        on: [...stretch.on]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3)
          .map(([fn, us]) => ({ fn, ms: Math.round(us / 100) / 10 })),
      });
    stretch = undefined;
  };
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    clock += us;
    if (isIdle(byId.get(id)!.callFrame)) return close();
    stretch ??= { atUs: clock - us, us: 0, on: new Map() };
    stretch.us += us;
    // Each named frame once per sample (a recursive one would count twice).
    for (const fn of new Set(named(id))) stretch.on.set(fn, (stretch.on.get(fn) ?? 0) + us);
  });
  close();
  return tasks.sort((a, b) => b.ms - a.ms).slice(0, top);
}

/** Self time per part and per function of one profile (a sample's time delta is charged to its node). */
export function summarise(file: string, profile: CpuProfile, top = 8): ThreadProfile {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const us = profile.timeDeltas[i] ?? 0;
    // A pool thread blocked in Atomics.wait is waiting for a task: idle, like the event loop's (idle).
    if (isIdle(frame)) return void (idleUs += us);
    busyUs += us;
    const part = partOf(frame);
    parts.set(part, (parts.get(part) ?? 0) + us);
    const fn = label(frame);
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  });
  const ms = (us: number) => Math.round(us / 100) / 10;
  return {
    file,
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    byPart: [...parts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([part, us]) => ({ part, ms: ms(us), share: Math.round((us / Math.max(1, busyUs)) * 1000) / 10 })),
    topFunctions: [...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, us]) => ({ fn, ms: ms(us) })),
    longTasks: longTasks(profile, byId, top),
  };
}

/** Every profile in a folder, busiest thread first. */
export function summariseFolder(dir: string, top = 8): ThreadProfile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => summarise(f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile, top))
    .sort((a, b) => b.busyMs - a.busyMs);
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node dist/bench/profile-summary.js <folder of .cpuprofile files>');
  console.log(JSON.stringify(summariseFolder(dir), null, 2));
}
