/**
 * A check every `intervalMs` that never overlaps itself (a slow round is not joined by the next) and whose
 * failure is reported, not thrown: what the service's watchers (Jobs, stalled runs) run on.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly intervalMs: number,
    private readonly round: () => Promise<unknown>,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.round()
        .then(() => undefined)
        .catch(this.onError)
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
