/** Edit distance of two short words (options, subcommands). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/** The candidate a mistyped word was most likely meant to be (within a third of its length, at least 2 edits), or undefined. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: { candidate: string; d: number } | undefined;
  for (const candidate of candidates) {
    const d = distance(word, candidate);
    if (d <= limit && (!best || d < best.d)) best = { candidate, d };
  }
  return best?.candidate;
}
