/**
 * A measurement a test wants to show (kill delays, stop times, work shared between replicas): printed
 * only with TEST_REPORT=1, so a passing `npm test` stays quiet.
 */
export function report(line: string): void {
  if (process.env.TEST_REPORT) process.stdout.write(`${line}\n`);
}
