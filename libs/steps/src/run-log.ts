import type { RunLogStore } from '../../event-store/src';

/** Words that mark a value as secret wherever it shows up in a log line. */
const SECRET_PATTERNS: RegExp[] = [
  /(password|passwd|secret|token|api[_-]?key|authorization|auth)(["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
  /\/\/[^/@\s:]+:[^/@\s]+@/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

export function redact(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const s of knownSecrets) if (s.length >= 4) out = out.split(s).join('***');
  out = out.replace(SECRET_PATTERNS[0], (_m, key, sep) => `${key}${sep}***`);
  out = out.replace(SECRET_PATTERNS[1], '//***@');
  return out.replace(SECRET_PATTERNS[2], '***');
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
