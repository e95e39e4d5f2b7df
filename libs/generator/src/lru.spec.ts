import { getHeapStatistics } from 'node:v8';
import { boundFromHeapLimit, LruByBytes } from './lru';

describe('LruByBytes', () => {
  it('holds at most its bound in bytes, dropping the least recently used first', () => {
    const lru = new LruByBytes<string>(10);
    lru.set('a', 'A', 4);
    lru.set('b', 'B', 4);
    expect(lru.get('a')).toBe('A'); // a is now the most recently used
    lru.set('c', 'C', 4);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    expect(lru.get('c')).toBe('C');
    expect(lru.bytes).toBe(8);
  });

  it('does not keep an entry larger than the bound, and counts a replaced entry once', () => {
    const lru = new LruByBytes<string>(10);
    lru.set('a', 'A', 4);
    lru.set('huge', 'H', 11);
    expect(lru.get('huge')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    lru.set('a', 'A2', 6);
    expect(lru.bytes).toBe(6);
    expect(lru.get('a')).toBe('A2');
  });

  describe('boundFromHeapLimit', () => {
    const MiB = 1024 * 1024;

    it("is the share of a pod's heap limit (512 MiB limit: a 268 MiB heap), and the ceiling on a large host", () => {
      expect(boundFromHeapLimit(1 / 16, 64 * MiB, 268 * MiB)).toBe(16.75 * MiB);
      expect(boundFromHeapLimit(1 / 32, 32 * MiB, 268 * MiB)).toBe(8.375 * MiB);
      expect(boundFromHeapLimit(1 / 16, 64 * MiB, 4096 * MiB)).toBe(64 * MiB);
    });

    it("reads this thread's heap limit when not given one", () => {
      const limit = getHeapStatistics().heap_size_limit;
      expect(boundFromHeapLimit(1 / 16, Number.MAX_SAFE_INTEGER)).toBe(Math.floor(limit / 16));
    });
  });
});
