/**
 * The plan of an upgrade, file by file of what the environment owns: the environment's files (ours),
 * the recorded commit's render (old) and the new commit's (new). A file the reference did not change
 * stays as ours byte for byte; one it changed becomes the new render's where ours is still the old
 * render's, else a clean three-way merge, else a conflict. Files it adds are added, files it deletes are
 * removed where unedited and listed where edited. Credentials go through credential-upgrade.ts.
 * "Unedited" is byte for byte, not YAML-normalised as drift compares: a comment or a re-indentation
 * is the customer's, and taking the new render over it would drop it.
 */
import { readRepoFileIfPresent } from '../repo-files';
import type { GenerateSummary } from '../context';
import {
  addedCredentialFile,
  CredentialOutcome,
  CredentialRenders,
  removedCredentialKeys,
  upgradeCredentialFile,
} from './credential-upgrade';
import type { ConflictHunk, FileMerger } from './three-way';
import { filesOf, holdsCredentials } from './tree-compare';

/** One side of the upgrade: a working copy and its summary (renders only). */
export interface UpgradeSide {
  root: string;
  summary?: GenerateSummary;
}

export interface UpgradeInputs {
  folders: string[];
  ours: UpgradeSide;
  old: Required<UpgradeSide>;
  new: Required<UpgradeSide>;
  sealedForCluster: boolean;
  merger: FileMerger;
}

export interface FileConflict {
  file: string;
  /** Why it conflicts when it is no overlapping edit (a file deleted here that the reference changed, ...). */
  reason?: string;
  hunks: ConflictHunk[];
}

export interface UpgradePlan {
  /** Files the reference adds. */
  added: string[];
  /** Files the reference changed that the environment had not: the new render's. */
  changed: string[];
  /** Files both changed, merged cleanly. */
  merged: string[];
  /** Files the reference deleted that the environment had not edited. */
  removed: string[];
  /** Files the reference deleted that the environment edited: kept, listed. */
  kept_edited: string[];
  conflicts: FileConflict[];
  credentials: { keys_added: string[]; keys_removed: string[]; files_added: string[]; files_removed: string[] };
  /** Why the upgrade is refused (SOPS key changes, keys without a value the upgrade may keep). */
  refusals: string[];
}

/** What carrying the plan out writes and removes (repository paths). */
export interface UpgradeEdits {
  writes: Map<string, Buffer>;
  removals: string[];
}

const read = (root: string, path: string) => readRepoFileIfPresent(root, path) ?? null;

/** A plan that changes nothing. */
export function emptyPlan(): UpgradePlan {
  return {
    added: [],
    changed: [],
    merged: [],
    removed: [],
    kept_edited: [],
    conflicts: [],
    credentials: { keys_added: [], keys_removed: [], files_added: [], files_removed: [] },
    refusals: [],
  };
}

/** The plan of the upgrade and the edits that carry it out. */
export function planUpgrade(inputs: UpgradeInputs): { plan: UpgradePlan; edits: UpgradeEdits } {
  const plan = emptyPlan();
  const edits: UpgradeEdits = { writes: new Map(), removals: [] };
  const paths = new Set(
    [inputs.ours, inputs.old, inputs.new].flatMap((side) => [...filesOf({ root: side.root, folders: inputs.folders })]),
  );
  for (const path of [...paths].sort()) {
    const versions = {
      ours: read(inputs.ours.root, path),
      old: read(inputs.old.root, path),
      new: read(inputs.new.root, path),
    };
    const credential = Object.values(versions).some((v) => v !== null && holdsCredentials(path, v.toString('utf8')));
    if (credential) planCredential(inputs, path, versions, plan, edits);
    else planFile(inputs.merger, path, versions, plan, edits);
  }
  return { plan, edits };
}

interface Versions {
  ours: Buffer | null;
  old: Buffer | null;
  new: Buffer | null;
}

function planFile(merger: FileMerger, path: string, v: Versions, plan: UpgradePlan, edits: UpgradeEdits) {
  const { ours, old, new: next } = v;
  const conflict = (reason: string) => plan.conflicts.push({ file: path, reason, hunks: [] });
  if (old && next && old.equals(next)) return; // the reference did not change it: ours stays, whatever it is
  if (!old && !next) return; // the environment's own file
  if (!next) {
    if (!ours) return;
    if (ours.equals(old!)) {
      plan.removed.push(path);
      edits.removals.push(path);
    } else plan.kept_edited.push(path);
    return;
  }
  if (!ours) {
    if (old) conflict('deleted in the environment, changed by the reference');
    else {
      plan.added.push(path);
      edits.writes.set(path, next);
    }
    return;
  }
  if (ours.equals(next)) return;
  if (!old) return conflict('the environment has another file where the reference adds one');
  if (ours.equals(old)) {
    plan.changed.push(path);
    edits.writes.set(path, next);
    return;
  }
  const outcome = merger.merge(ours, old, next);
  if (!outcome.clean) plan.conflicts.push({ file: path, hunks: outcome.conflicts });
  else if (!outcome.merged.equals(ours)) {
    plan.merged.push(path);
    edits.writes.set(path, outcome.merged);
  }
}

function planCredential(inputs: UpgradeInputs, path: string, v: Versions, plan: UpgradePlan, edits: UpgradeEdits) {
  const renders: CredentialRenders = {
    path,
    old: inputs.old.summary,
    new: inputs.new.summary,
    sealedForCluster: inputs.sealedForCluster,
  };
  const record = (outcome: CredentialOutcome) => {
    plan.credentials.keys_added.push(...outcome.keys_added);
    plan.credentials.keys_removed.push(...outcome.keys_removed);
    plan.refusals.push(...outcome.refusals);
    return outcome.refusals.length === 0;
  };
  if (!v.new) {
    // The reference no longer has the Secret: its ciphertext goes (it cannot be compared with the old render's).
    if (!v.ours || !v.old) return;
    plan.credentials.files_removed.push(path);
    plan.credentials.keys_removed.push(...removedCredentialKeys(inputs.old.summary, path));
    edits.removals.push(path);
  } else if (!v.old) {
    if (v.ours)
      return void plan.conflicts.push({
        file: path,
        reason: 'the environment has a file where the reference adds a credential file',
        hunks: [],
      });
    if (!record(addedCredentialFile(renders))) return;
    plan.credentials.files_added.push(path);
    edits.writes.set(path, v.new);
  } else if (v.ours) {
    const outcome = upgradeCredentialFile(renders, v.ours, v.new);
    if (record(outcome) && outcome.content) edits.writes.set(path, outcome.content);
  }
  // Deleted in the environment while the reference keeps it: a credential is never brought back unasked.
}
