/**
 * Retiring an environment: the files its ownership markers mark as its own leave the working copy, the entries
 * of shared kustomizations that list its folders go with them, and HEAD is tagged `retired/<name>/<time>` first,
 * so the last live commit stays one command away. Everything is decided before anything is written: a refusal
 * (a confirmation that does not repeat the name, no commit to tag, uncommitted changes in the environment,
 * another environment inside its folders, a Flux Kustomization elsewhere still applying them) writes nothing.
 * Like a pass, it leaves committing to the user.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Document } from 'yaml';
import { isClusterName } from '#libs/validation';
import { GeneratorInputError } from '../errors';
import { isFluxKustomization } from '../flux-sync';
import { KUSTOMIZATION_FILES } from '../reference';
import { GIT_PROGRAM, gitAnswer, GitRunner } from '../reference-git';
import { readRepoFile, withRepoLimits } from '../repo-files';
import type { RepoLimits } from '#libs/runtime';
import { escapeRegex } from '../sops-rules';
import { parseDocuments, stringifyDocuments } from '../yaml-docs';
import { markedFolders } from './environment-markers';

export interface RetireRequest {
  repoDir: string;
  clusterName: string;
  /** The cluster's name again: a retirement is never one mistyped flag away. */
  confirm: string;
  dryRun?: boolean;
  /** When the tag says it was retired (tests give it). */
  now?: Date;
  repoLimits?: RepoLimits;
  git?: GitRunner;
}

/** What a retirement removes and edits (repository-relative paths), and the tag that keeps the last live commit. */
export interface RetirePlan {
  cluster_name: string;
  folders: string[];
  files_removed: string[];
  /** Entries of shared kustomizations that named one of the folders: the file and the entry. */
  entries_removed: Array<{ file: string; entry: string }>;
  /** `.sops.yaml` creation rules that matched only the environment's files (their path_regex). */
  sops_rules_removed: string[];
  tag: string;
  /** The commit the tag names: the environment's last live state. */
  tagged_commit: string;
  /** Brings every removed or edited file back from the tag. */
  restore: string;
  dry_run: boolean;
}

export function retireEnvironment(request: RetireRequest): Promise<RetirePlan> {
  return withRepoLimits(request.repoLimits, async () => {
    const plan = planRetirement(request);
    if (!request.dryRun) applyRetirement(request, plan);
    return plan.summary;
  });
}

interface PlannedRetirement {
  summary: RetirePlan;
  /** Files rewritten (shared kustomizations, .sops.yaml) with their new content. */
  edits: Map<string, string>;
}

function planRetirement(request: RetireRequest): PlannedRetirement {
  const { repoDir, clusterName } = request;
  const git = request.git ?? GIT_PROGRAM;
  // The name becomes a tag's: a name no cluster could have is bad input, never a git error.
  const badName = isClusterName(clusterName);
  if (badName) throw new GeneratorInputError(`--cluster-name ${JSON.stringify(clusterName)} ${badName}`);
  if (request.confirm !== clusterName)
    throw new GeneratorInputError(
      `--confirm ${JSON.stringify(request.confirm)} does not repeat the cluster's name ${clusterName}; nothing retired`,
    );
  const { folders, others } = environmentFolders(repoDir, clusterName);
  const head = gitAnswer(git, repoDir, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (!head) throw new GeneratorInputError(`${repoDir} has no commit to tag as the environment's last live state`);
  refuseUncommitted(git, repoDir, folders, 'hold');
  const tracked = (gitAnswer(git, repoDir, ['ls-files', '-z']) ?? '').split('\0').filter(Boolean);
  const inEnvironment = (path: string) => folders.some((f) => path === f || path.startsWith(`${f}/`));
  const remaining = tracked.filter((path) => !inEnvironment(path));
  refuseAppliedElsewhere(repoDir, remaining, inEnvironment);
  const edits = new Map<string, string>();
  const entries = listedEntries(repoDir, remaining, inEnvironment, edits);
  const sopsRules = sopsRulesOnlyFor(repoDir, tracked, folders, edits);
  // Another environment's own files are never edited: one of them listing a folder the marker claims is a refusal.
  const theirs = [...edits.keys()].filter((file) => others.some((o) => file.startsWith(`${o.folder}/`)));
  if (theirs.length > 0)
    throw new GeneratorInputError(
      `${theirs.join(', ')} of another environment still list${theirs.length === 1 ? 's' : ''} ${folders.join(', ')}; nothing retired`,
    );
  refuseUncommitted(git, repoDir, [...edits.keys()], 'would be edited and hold');
  const tag = `retired/${clusterName}/${timestamp(request.now ?? new Date())}`;
  const restored = [...folders, ...edits.keys()].map(shellWord);
  return {
    edits,
    summary: {
      cluster_name: clusterName,
      folders,
      files_removed: tracked.filter(inEnvironment),
      entries_removed: entries,
      sops_rules_removed: sopsRules,
      tag,
      tagged_commit: head,
      restore: `git checkout ${tag} -- ${restored.join(' ')}`,
      dry_run: request.dryRun === true,
    },
  };
}

/**
 * The environment's folders (its markers'), refused when none names it or another environment lives inside one;
 * and the other environments' marked folders.
 */
function environmentFolders(repoDir: string, clusterName: string) {
  const marked = markedFolders(repoDir);
  const folders = marked.filter((m) => m.marker.cluster_name === clusterName).map((m) => m.folder);
  if (folders.length === 0)
    throw new GeneratorInputError(
      `no ownership marker (.gitops-scaffolder.json) for cluster ${clusterName}; nothing retired`,
    );
  // The repository's root is never an environment's folder to remove: it holds .git and every shared file.
  if (folders.includes('.'))
    throw new GeneratorInputError(
      `the ownership marker of cluster ${clusterName} is at the repository's root, which retire never removes; nothing retired`,
    );
  // Another environment inside one of its folders, or one of its folders inside another environment's.
  const inside = marked.find(
    (m) =>
      m.marker.cluster_name !== clusterName &&
      folders.some((f) => m.folder.startsWith(`${f}/`) || m.folder === '.' || f.startsWith(`${m.folder}/`)),
  );
  if (inside)
    throw new GeneratorInputError(
      `${inside.folder} inside the environment's folders belongs to cluster ${inside.marker.cluster_name}; nothing retired`,
    );
  return { folders, others: marked.filter((m) => m.marker.cluster_name !== clusterName) };
}

/**
 * Refuses paths with changes the tag would not keep: uncommitted, untracked, or ignored by git (a local secrets file
 * the removal would delete and no restore could bring back).
 */
function refuseUncommitted(git: GitRunner, repoDir: string, paths: string[], verb: string) {
  if (paths.length === 0) return;
  const changed = gitAnswer(git, repoDir, [
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--ignored',
    '--',
    ...paths,
  ]);
  if (changed)
    throw new GeneratorInputError(
      `${paths.join(', ')} ${verb} uncommitted, untracked or ignored files, which the tag would not keep; commit or remove them first, nothing retired`,
    );
}

/** A path as a POSIX shell reads it back (the restore command is pasted into one). */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** A Flux Kustomization's spec.path as a repository path (Flux reads `./x`, `x` and `/x` alike, from the source's root). */
const repositoryPath = (path: string) => posix.normalize(`/${path}`).replace(/^\/+/, '') || '.';

/** A Flux Kustomization outside the environment that still applies one of its folders would fail once they are gone. */
function refuseAppliedElsewhere(repoDir: string, remaining: string[], inEnvironment: (path: string) => boolean) {
  const applying = yamlFiles(remaining).flatMap((file) =>
    documentsOf(repoDir, file)
      .map((doc) => doc.toJS())
      .filter((body) => isFluxKustomization(body) && typeof body.spec?.path === 'string')
      .filter((body) => inEnvironment(repositoryPath(body.spec.path)))
      .map((body) => `${file} (Kustomization ${body.metadata?.name}, path ${body.spec.path})`),
  );
  if (applying.length > 0)
    throw new GeneratorInputError(
      `still applied from outside the environment: ${applying.join('; ')}; remove or repoint those first, nothing retired`,
    );
}

/** The entries of kustomizations outside the environment that name one of its folders or files, taken out (edits). */
function listedEntries(
  repoDir: string,
  remaining: string[],
  inEnvironment: (path: string) => boolean,
  edits: Map<string, string>,
): Array<{ file: string; entry: string }> {
  const removed: Array<{ file: string; entry: string }> = [];
  for (const file of remaining.filter((f) => KUSTOMIZATION_FILES.includes(posix.basename(f)))) {
    const [doc] = documentsOf(repoDir, file);
    if (!doc) continue;
    let edited = false;
    for (const field of ['resources', 'components']) {
      const list = doc.get(field) as any;
      if (!list || !Array.isArray(list.items)) continue;
      const items = list.items as Array<{ value?: unknown }>;
      const gone = items.filter((item) => {
        const entry = String(item?.value ?? '');
        return !/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) && inEnvironment(posix.join(posix.dirname(file), entry));
      });
      for (const item of gone) removed.push({ file, entry: String(item.value) });
      list.items = items.filter((item) => !gone.includes(item));
      edited ||= gone.length > 0;
    }
    if (edited) edits.set(file, stringifyDocuments([doc]));
  }
  return removed;
}

/**
 * `.sops.yaml` creation rules made for the environment, taken out (edits): each names one of its folders (as the
 * generator writes them, escaped or not) and matches some of its files and nothing else tracked. A general rule
 * (`^clusters/[^/]+/...`) stays, whatever it matches today.
 */
function sopsRulesOnlyFor(repoDir: string, tracked: string[], folders: string[], edits: Map<string, string>): string[] {
  const inEnvironment = (path: string) => folders.some((f) => path.startsWith(`${f}/`));
  const namesFolder = (source: string) => folders.some((f) => source.includes(f) || source.includes(escapeRegex(f)));
  if (!tracked.includes('.sops.yaml')) return [];
  const [doc] = documentsOf(repoDir, '.sops.yaml');
  const rules = doc?.get('creation_rules') as any;
  if (!rules || !Array.isArray(rules.items)) return [];
  const onlyOurs = (rule: any) => {
    const source = rule?.get?.('path_regex');
    if (typeof source !== 'string' || !namesFolder(source)) return false;
    let regex: RegExp;
    try {
      regex = new RegExp(source);
    } catch {
      return false;
    }
    const matched = tracked.filter((path) => regex.test(path));
    return matched.length > 0 && matched.every(inEnvironment);
  };
  const gone = rules.items.filter(onlyOurs);
  if (gone.length === 0) return [];
  rules.items = rules.items.filter((rule: unknown) => !gone.includes(rule));
  edits.set('.sops.yaml', stringifyDocuments([doc]));
  return gone.map((rule: any) => String(rule.get('path_regex')));
}

/** Tags the last live commit, then removes the environment's files and writes the edited shared files. */
function applyRetirement(request: RetireRequest, { summary, edits }: PlannedRetirement) {
  const git = request.git ?? GIT_PROGRAM;
  git.run(request.repoDir, ['tag', summary.tag, summary.tagged_commit]);
  for (const file of summary.files_removed) rmSync(join(request.repoDir, file), { force: true });
  for (const folder of summary.folders) rmSync(join(request.repoDir, folder), { recursive: true, force: true });
  for (const [file, content] of edits) writeFileSync(join(request.repoDir, file), content);
}

const yamlFiles = (paths: string[]) => paths.filter((p) => /\.ya?ml$/.test(p));

/** A file's YAML documents, or none when it is no YAML the generator reads (a template, a broken file). */
function documentsOf(repoDir: string, file: string): Document[] {
  try {
    return parseDocuments(readRepoFile(repoDir, file, 'utf8'), file);
  } catch (e) {
    if (e instanceof GeneratorInputError) return [];
    throw e;
  }
}

/** 20261207T203000Z: a tag name's time (no colons; sorts as time). */
const timestamp = (at: Date) =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/** The plan in words, as `generate-gitops-env retire` prints it. */
export function describeRetirement(plan: RetirePlan): string {
  const lines = [
    `${plan.dry_run ? 'would retire' : 'retired'} ${plan.cluster_name}: ${plan.files_removed.length} files of ${plan.folders.join(', ')} removed`,
    ...plan.entries_removed.map((e) => `  ${e.file}: entry ${e.entry} removed`),
    ...plan.sops_rules_removed.map((r) => `  .sops.yaml: creation rule ${r} removed`),
    `${plan.dry_run ? 'would tag' : 'tagged'} ${plan.tagged_commit} as ${plan.tag} (the last live commit)`,
    `restore with: ${plan.restore}`,
    plan.dry_run ? 'dry run: nothing written' : 'commit the removal to retire it on the branch Flux reads',
  ];
  return lines.join('\n') + '\n';
}
