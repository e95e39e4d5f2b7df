/**
 * A forge's error answer as a ForgeError: the status, the forge's own words (GitHub `message` and
 * `errors[].message`, GitLab `message` as a string, a list or a field map, or `error`, Gitea `message`), and
 * for a rate limit or a 5xx the wait the forge asked for: `Retry-After` (seconds or a date), else GitHub's
 * `x-ratelimit-reset` once `x-ratelimit-remaining` is 0, else GitLab's `RateLimit-Reset` (both Unix times).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ForgeError, ForgeKind } from '../port/forge-port';
import { redact } from './redact';

/** How much of a forge's words an error keeps. */
const MAX_DETAIL = 300;

export function answerError(
  kind: ForgeKind,
  method: string,
  path: string,
  answer: { status: number; headers: IncomingHttpHeaders; body: Buffer },
  token: string,
): ForgeError {
  const detail = describe(answer.body.toString('utf8'));
  const message = `${kind} ${method} ${path}: ${answer.status}${detail ? ` ${detail}` : ''}`;
  return new ForgeError(redact(message, token), answer.status, retryAfterMs(answer.status, answer.headers));
}

/** The forge's words from an error body, short and on one line. */
export function describe(text: string): string {
  let words: string[];
  try {
    words = wordsOf(JSON.parse(text));
  } catch {
    // An HTML page of a proxy: its text only.
    words = [text.replace(/<[^>]*>/g, ' ')];
  }
  const line = words.join('; ').replace(/\s+/g, ' ').trim();
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL)}…` : line;
}

function wordsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(wordsOf);
  if (value === null || typeof value !== 'object') return [];
  const body = value as Record<string, unknown>;
  const own = [body.message, body.error].flatMap((v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? fieldMessages(v as Record<string, unknown>) : wordsOf(v),
  );
  const details = Array.isArray(body.errors)
    ? body.errors.flatMap((e) => (typeof e === 'string' ? [e] : wordsOf((e as { message?: unknown })?.message)))
    : [];
  return [...own, ...details];
}

/** GitLab's `{"message": {"title": ["can't be blank"]}}` as `title can't be blank`. */
const fieldMessages = (fields: Record<string, unknown>) =>
  Object.entries(fields).map(([field, v]) => `${field} ${wordsOf(v).join(', ')}`);

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * The wait before the same call may succeed, or undefined when it never will as it is. A rate limit is a
 * 429, or GitHub's 403 with `x-ratelimit-remaining: 0` (primary) or a `retry-after` (secondary).
 */
export function retryAfterMs(status: number, headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const exhausted = header(headers, 'x-ratelimit-remaining') === '0';
  const rateLimited = status === 429 || (status === 403 && (exhausted || header(headers, 'retry-after') !== undefined));
  if (!rateLimited && status < 500) return undefined;
  return waitOf(headers, exhausted, now) ?? 0;
}

function waitOf(headers: IncomingHttpHeaders, exhausted: boolean, now: number): number | undefined {
  const retryAfter = header(headers, 'retry-after')?.trim();
  if (retryAfter && /^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
  if (retryAfter && !Number.isNaN(Date.parse(retryAfter))) return Math.max(0, Date.parse(retryAfter) - now);
  const reset = (exhausted && header(headers, 'x-ratelimit-reset')) || header(headers, 'ratelimit-reset');
  if (!reset || !/^\d+$/.test(reset.trim())) return undefined;
  const value = Number(reset);
  // A Unix time (GitHub, GitLab); a small number is the IETF draft's seconds from now.
  return value > 1_000_000_000 ? Math.max(0, value * 1000 - now) : value * 1000;
}
