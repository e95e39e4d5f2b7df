/**
 * What scaffolderctl changes goes through the service's REST API with an admin key (#28): the ops NATS
 * identity only reads, so a run's history is written by the service alone, through its rules and its audit.
 */
import { readFileSync } from 'node:fs';

/** A mistake in how the command was called (exit code 2). */
export class CtlError extends Error {}

/** The service refused or could not be reached (exit code 1): one line with status, code and message. */
export class ApiRefusal extends Error {}

/** Long enough for a busy service to append one event, short enough not to hang a terminal. */
const API_TIMEOUT_MS = 30_000;

export interface ApiTarget {
  url: string;
  key: string;
}

/** The service's URL and admin key from the options or the environment; a key is never an argument. */
export function apiTarget(env: NodeJS.ProcessEnv, opts: { url?: string; 'api-key-file'?: string }): ApiTarget {
  const url = opts.url ?? env.SCAFFOLDER_URL;
  if (!url) throw new CtlError('needs the service: --url URL or SCAFFOLDER_URL');
  if (!/^https?:\/\//.test(url)) throw new CtlError(`--url/SCAFFOLDER_URL must be an http(s) URL, not "${url}"`);
  const keyFile = opts['api-key-file'] ?? env.SCAFFOLDER_API_KEY_FILE;
  const key = keyFile ? readKeyFile(keyFile) : env.SCAFFOLDER_API_KEY?.trim();
  if (!key)
    throw new CtlError('needs an admin API key: --api-key-file FILE, SCAFFOLDER_API_KEY_FILE or SCAFFOLDER_API_KEY');
  return { url: url.replace(/\/+$/, ''), key };
}

function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new CtlError(`cannot read the API key file ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** POST /api/v1/scaffolds/{id}/{action}: the run as the service answers it, or an ApiRefusal. */
export async function postRunAction(target: ApiTarget, runId: string, action: 'redrive' | 'cancel'): Promise<any> {
  const url = `${target.url}/api/v1/scaffolds/${encodeURIComponent(runId)}/${action}`;
  let res: Response;
  try {
    // No redirects: the key must reach the service named, not wherever an answer points.
    res = await fetch(url, {
      method: 'POST',
      headers: { 'x-api-key': target.key },
      redirect: 'error',
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause;
    throw new ApiRefusal(`${target.url} could not be reached: ${cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text();
  const body = parseJson(text);
  if (res.ok) return body;
  const error = body?.error ?? {};
  throw new ApiRefusal(
    `${action} refused: ${res.status} ${error.code ?? res.statusText}: ${error.message ?? text.slice(0, 200)}`.replace(
      /\s+/g,
      ' ',
    ),
  );
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
