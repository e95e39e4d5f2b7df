/**
 * SealedSecret files named so that the repository's SOPS rules do not take them. A reference whose
 * Secrets are SOPS files (`cluster-secrets.secret.sops.yaml`) keeps rules such as onedr0p/home-ops'
 * `kubernetes/.+\.secret(\.sops)?\.ya?ml`; a SealedSecret written under the reference file's name
 * would match, and a person's `sops -e`, an editor plugin or a pre-commit hook that encrypts (or
 * requires encrypting) every matching file would turn it into a SOPS file the cluster cannot apply.
 */
import { posix } from 'node:path';
import type { Context } from './context';
import { KUSTOMIZATION_FILES } from './reference';
import { readRepoFileIfPresent } from './repo-files';
import { SOPS_CONFIG } from './sops-rules';
import { readBodies } from './yaml-docs';

/** The path_regex of every creation rule of the repository's .sops.yaml (a rule without one matches every path). */
function sopsRulePatterns(repoDir: string): Array<{ source: string; test: (path: string) => boolean }> {
  const text = readRepoFileIfPresent(repoDir, SOPS_CONFIG)?.toString('utf8');
  if (text === undefined) return [];
  let rules: unknown;
  try {
    rules = readBodies(text, SOPS_CONFIG)[0]?.creation_rules;
  } catch {
    return [];
  }
  if (!Array.isArray(rules)) return [];
  return rules.flatMap((rule: any) => {
    const source = rule?.path_regex;
    if (source === undefined || source === null || source === '') return [{ source: '(every path)', test: () => true }];
    if (typeof source !== 'string') return [];
    // sops compiles it with Go's RE2, whose syntax JavaScript reads alike but for inline flags such as (?i).
    const insensitive = source.startsWith('(?i)');
    try {
      const re = new RegExp(insensitive ? source.slice(4) : source, insensitive ? 'i' : '');
      return [{ source, test: (path: string) => re.test(path) }];
    } catch {
      return [];
    }
  });
}

/** Name parts that say "encrypt me" to people and tools: left out of a sealed file's name. */
const ENCRYPTION_WORDS = new Set(['sops', 'enc', 'encrypted', 'secret', 'secrets', 'age']);

/** Names to try for a sealed file, best first: `cluster-secrets.secret.sops.yaml` gives `cluster-secrets.sealedsecret.yaml`, ... */
function candidateNames(base: string): string[] {
  const parts = base.split('.');
  const ext = parts.length > 1 ? parts.pop()! : 'yaml';
  const stem = parts.filter((p) => !ENCRYPTION_WORDS.has(p.toLowerCase())).join('.') || 'sealed';
  return [`${stem}.sealedsecret.${ext}`, `${stem}.sealed.${ext}`, `${stem}-sealed.${ext}`, `sealed-${stem}.${ext}`];
}

/** Points every kustomization entry of the folder that names `from` (relative to the folder) at `to`. */
function relist(files: Map<string, Buffer>, from: string, to: string) {
  for (const [rel, content] of files) {
    if (!KUSTOMIZATION_FILES.includes(posix.basename(rel))) continue;
    const dir = posix.dirname(rel);
    const entry = posix.relative(dir, from);
    const text = content.toString('utf8');
    // The entry as the kustomization writes it (`./x.yaml` or `x.yaml`), as a whole list item.
    const item = new RegExp(
      `^(\\s*-\\s*["']?)(\\./)?${entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(["']?\\s*)$`,
      'gm',
    );
    const renamed = text.replace(item, (_, start, dot, end) => `${start}${dot ?? ''}${posix.relative(dir, to)}${end}`);
    if (renamed !== text) files.set(rel, Buffer.from(renamed));
  }
}

/**
 * Renames, in a folder about to be written (`files`, relative to `dir`), every file holding a
 * SealedSecret this pass wrote whose repository path a creation rule of `.sops.yaml` matches, and
 * the kustomization entries listing it. When every name tried matches (a rule for every path) the
 * name stays and a warning names the rule.
 */
export function renameSealedFiles(ctx: Context, dir: string, files: Map<string, Buffer>) {
  if (ctx.opts.secretsBackend === 'sops') return;
  const rules = sopsRulePatterns(ctx.opts.repoDir);
  if (rules.length === 0) return;
  const matching = (rel: string) => rules.find((r) => r.test(`${dir}/${rel}`));
  for (const sealed of ctx.summary.objects_sealed) {
    if (!sealed.file.startsWith(dir + '/')) continue;
    const rel = sealed.file.slice(dir.length + 1);
    const rule = files.has(rel) ? matching(rel) : undefined;
    if (!rule) continue;
    const to = candidateNames(posix.basename(rel))
      .map((name) => posix.join(posix.dirname(rel), name))
      .find((name) => !files.has(name) && !matching(name));
    if (to === undefined) {
      ctx.summary.warnings.push(
        `${sealed.file} holds SealedSecret ${sealed.namespace}/${sealed.name} and ${SOPS_CONFIG}'s rule ${rule.source} matches every name tried for it: sops run on it would encrypt it; narrow the rule`,
      );
      continue;
    }
    files.set(to, files.get(rel)!);
    files.delete(rel);
    relist(files, rel, to);
    for (const o of ctx.summary.objects_sealed) if (o.file === sealed.file) o.file = `${dir}/${to}`;
  }
}

/** The name an earlier full pass gave a sealed file of the reference's `rel` (itself when none was needed). */
export function sealedNameCandidates(rel: string): string[] {
  return candidateNames(posix.basename(rel)).map((name) => posix.join(posix.dirname(rel), name));
}
