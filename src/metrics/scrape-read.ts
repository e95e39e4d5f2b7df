/**
 * One read of a source per scrape: prom-client collects gauges concurrently, so every gauge fed by the
 * same source (JetStream, the read-model) awaits the same read instead of each asking again.
 */
export class ScrapeRead {
  private last?: { at: number; done: Promise<void> };

  constructor(
    private readonly read: () => Promise<void>,
    private readonly reuseMs = 250,
  ) {}

  get(): Promise<void> {
    if (this.last && Date.now() - this.last.at < this.reuseMs) return this.last.done;
    this.last = { at: Date.now(), done: this.read() };
    return this.last.done;
  }
}
