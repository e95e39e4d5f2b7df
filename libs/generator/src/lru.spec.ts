import { LruByBytes } from './lru';

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
});
