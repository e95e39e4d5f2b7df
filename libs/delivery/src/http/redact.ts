/**
 * A token out of a text: forges echo what they were sent in some answers (a token pasted into a branch name,
 * a proxy's error page), so every message and log line is cleaned of it before it leaves an adapter.
 */
export function redact(text: string, token: string): string {
  // A token too short to be one would mangle every message (and cannot be told from ordinary words).
  return token.length >= 4 ? text.split(token).join('***') : text;
}
