/** git's errors: a step's git command that failed (with whether a retry can help), and settings git cannot run with. */

/** Why a git step failed, and whether trying again can help. */
export class GitStepError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'GitStepError';
  }
}

/** The git access settings cannot be used: the process stops at start with this reason. */
export class GitAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitAccessError';
  }
}

/** git's progress line and generic advice after a failed connection: they say nothing about the cause. */
const GENERIC_HINT =
  /^(Please make sure you have the correct access rights|and the repository exists\.|Cloning into .*\.\.\.)$/;
/** Causes that stay the same on a second try: wrong credentials, an unknown or changed host key. */
const REFUSED =
  /Authentication failed|Permission denied|could not read Username|could not read Password|Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .* host key is known|returned error: 403/i;

/**
 * git's own reason, up to and including its first `fatal:`/`error:` line (ssh and the remote speak
 * first: "Host key verification failed.", "ssh: Could not resolve hostname ..."), with the URL and
 * any user information replaced.
 */
function gitReason(text: string, url: string): string {
  const lines = text
    .replaceAll(url, '<repo>')
    .replace(/\/\/[^/@\s]+@/g, '//***@')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !GENERIC_HINT.test(l));
  const end = lines.findIndex((l) => /^(fatal|error):/.test(l));
  return (end < 0 ? lines.slice(0, 3) : lines.slice(Math.max(0, end - 3), end + 1)).join(' ') || 'no output';
}

/** Maps git's words to a reason a person can act on, and says whether a retry can help. */
export function classifyGitError(e: unknown, url: string): GitStepError {
  // Classified without the URL: a path or host that happens to contain "403" or "not found" says nothing.
  const text = String((e as Error)?.message ?? e).replaceAll(url, '<repo>');
  const reason = gitReason(text, url);
  if (REFUSED.test(text)) return new GitStepError(`authentication refused: ${reason}`, false);
  if (/Remote branch .* not found|couldn't find remote ref/i.test(text))
    return new GitStepError(`the branch does not exist on the remote: ${reason}`, false);
  if (/does not appear to be a git repository|not found|No such file/i.test(text))
    return new GitStepError(`repository not found: ${reason}`, false);
  if (
    /certificate verification failed|SSL certificate problem|unable to get local issuer|self.signed certificate/i.test(
      text,
    )
  )
    return new GitStepError(`TLS verification failed: ${reason}`, false);
  if (/non-fast-forward|fetch first|rejected/i.test(text)) return new GitStepError(`push rejected: ${reason}`, true);
  return new GitStepError(`git failed: ${reason}`, true);
}
