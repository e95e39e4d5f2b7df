/**
 * One read of a source per scrape: prom-client collects every metric of a scrape concurrently, so the
 * gauges fed by the same source (JetStream, the read-model) share the read under way instead of each
 * asking again. A later scrape reads afresh.
 */
export class ScrapeRead {
  private inFlight?: Promise<void>;

  constructor(private readonly read: () => Promise<void>) {}

  get(): Promise<void> {
    this.inFlight ??= this.read().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }
}
