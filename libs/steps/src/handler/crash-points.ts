/**
 * Named points where the reliability tests kill the process, armed only by SCAFFOLDER_CRASH_AT=<point>[,<point>...].
 * `<point>` kills it with SIGKILL (no cleanup); `memory:<point>` takes memory until the kernel's OOM killer ends it
 * under a memory limit (a pod's, a test's cgroup), as a step reading a planted file whole would. Unset in production,
 * where this is a no-op string check.
 */
export function crashPoint(name: string): void {
  const armed = process.env.SCAFFOLDER_CRASH_AT;
  if (!armed) return;
  const points = armed.split(',');
  if (points.includes(`memory:${name}`)) exhaustMemory();
  if (points.includes(name)) process.kill(process.pid, 'SIGKILL');
}

const CHUNK_BYTES = 64 * 1024 * 1024;
/** Without a memory limit the OOM killer would pick from the whole machine: past this the process kills itself. */
const MOST_BYTES = 4 * 1024 * 1024 * 1024;

/** Memory outside the JS heap, every page written (as a file's buffers are), so it counts against the cgroup at once. */
function exhaustMemory(): void {
  const held: Buffer[] = [];
  for (let taken = 0; taken < MOST_BYTES; taken += CHUNK_BYTES) held.push(Buffer.alloc(CHUNK_BYTES, 1));
  process.kill(process.pid, 'SIGKILL');
}
