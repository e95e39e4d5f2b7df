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
    if (frame.functionName === '(idle)' || frame.functionName === 'atomicsWaitLoop') return void (idleUs += us);
    busyUs += us;
    const part = partOf(frame);
    parts.set(part, (parts.get(part) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${part}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
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
