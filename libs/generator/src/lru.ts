import { getHeapStatistics } from 'node:v8';

/**
 * A cache bounded by the bytes of what it holds (each entry's size as the caller measures it), least
 * recently used first out: what the generator keeps between passes (parses, builds) must stay flat
 * in memory whatever the references' sizes, and an entry count would not say how much that is.
 */
export class LruByBytes<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value`; an entry larger than the whole bound is not kept (it would only push every other out). */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.held += bytes;
    for (const [oldest, { bytes: size }] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= size;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }

  get bytes(): number {
    return this.held;
  }
}

/**
 * A cache's bound as a share of this thread's heap limit, at most `ceiling` bytes. Node sizes each
 * isolate's heap limit from the memory the process may use: in a pod with the chart's 512 MiB limit
 * a heap may grow to about 268 MiB (on a host without a limit, about 4 GiB). A fixed bound that suits
 * a large host held a fifth of a small pod's heap in caches (docs/benchmarks.md).
 */
export function boundFromHeapLimit(
  shareOfHeapLimit: number,
  ceiling: number,
  heapLimit = getHeapStatistics().heap_size_limit,
): number {
  return Math.min(ceiling, Math.floor(heapLimit * shareOfHeapLimit));
}
