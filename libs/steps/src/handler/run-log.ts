import type { RunLogStore } from '#libs/event-store';

/** A key that names a secret, then how its value is attached. */
const SECRET_KEY = /(password|passwd|secret|token|api[_-]?key|authorization|auth)(["']?\s*[:=]\s*["']?)([^\s"',}]+)/gi;
/** An HTTP Authorization value: its scheme word and the credentials after it. */
const AUTHORIZATION = /(authorization\s*:\s*)(?:(?:Basic|Bearer|Token|Digest)\s+)?[^\s"',}]+/gi;
const URL_USERINFO = /\/\/[^/@\s:]+:[^/@\s]+@/g;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g;

/**
 * Whether what follows a secret-looking key is a value rather than prose. `key=value`, quoted keys
 * (`"token": "…"`) and `Authorization:` always hold a value; after a bare `key: ` an ordinary word
 * ("a registry pull secret: give REGISTRY_SERVER") is prose, while anything with digits, capitals or
 * symbols, or a long run of letters, is treated as a value.
 */
function isValue(key: string, sep: string, value: string): boolean {
  if (sep.includes('=') || /["']/.test(sep) || /^auth/i.test(key)) return true;
  return !/^[a-z]{1,15}$/.test(value);
}

/** A log line with secret values replaced by ***: known secrets, key/value forms, URL user information, private keys. */
export function redact(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const s of knownSecrets) if (s.length >= 4) out = out.split(s).join('***');
  out = out.replace(AUTHORIZATION, '$1***');
  out = out.replace(SECRET_KEY, (whole, key: string, sep: string, value: string) =>
    isValue(key, sep, value) ? `${key}${sep}***` : whole,
  );
  out = out.replace(URL_USERINFO, '//***@');
  return out.replace(PRIVATE_KEY, '***');
}

/** The run's own log: redacted lines on the run's log subject, so they outlive processes and pods. */
export class RunLog {
  constructor(
    private readonly logs: RunLogStore,
    private readonly runId: string,
    private readonly step: string,
    private readonly knownSecrets: readonly string[] = [],
  ) {}

  async line(message: string, level: 'info' | 'warn' | 'error' = 'info'): Promise<void> {
    const entry = { time: new Date().toISOString(), level, step: this.step, msg: redact(message, this.knownSecrets) };
    // A lost log line must never fail the step it describes.
    await this.logs.append(this.runId, entry).catch(() => undefined);
  }
}
