/**
 * PostgreSQL's text and jsonb cannot hold U+0000: one such character in an event (any writer, any string)
 * would fail every write of its batch and hold the projection of every run. Stored as U+FFFD instead.
 */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  if (value && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)])) as T;
  return value;
}
