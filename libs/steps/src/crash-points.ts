/**
 * Named points where the reliability tests kill the process (SIGKILL, no cleanup), armed only by
 * SCAFFOLDER_CRASH_AT=<point>[,<point>...]. Unset in production, where this is a no-op string check.
 */
export function crashPoint(name: string): void {
  const armed = process.env.SCAFFOLDER_CRASH_AT;
  if (armed && armed.split(',').includes(name)) process.kill(process.pid, 'SIGKILL');
}
