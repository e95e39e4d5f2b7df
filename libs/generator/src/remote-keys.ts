/**
 * ExternalSecret remote keys in a pass: the reference's names for this pass, and the moves made in
 * the new cluster's files, recorded in the summary (see external-secrets.ts).
 */
import type { Document } from 'yaml';
import type { Context } from './context';
import { referenceEnvironmentName } from './environment-folder';
import { moveRemoteKeys, remoteKeyNames, RemoteKeyNames } from './external-secrets';

/** The names of the reference in remote keys, for this pass (its domain, environment name and any cluster name it gives). */
export function remoteKeyNamesFor(ctx: Context, clusterNames: string[] = []): RemoteKeyNames {
  return remoteKeyNames(
    {
      domain: ctx.summary.reference_domain || undefined,
      // A single-cluster folder (kubernetes/) has no name of its own: "kubernetes" in a key names no cluster.
      names: [referenceEnvironmentName(ctx.referenceRoot, ctx.opts.referenceEnv) ?? [], clusterNames].flat(),
    },
    { domain: ctx.opts.domain, clusterName: ctx.opts.clusterName },
  );
}

/** Moves an ExternalSecret's remote keys in a document of the new cluster's own files, recording each move; true when it changed. */
export function moveRemoteKeysIn(ctx: Context, doc: Document, file: string): boolean {
  if (!ctx.remoteKeyNames) return false;
  const moves = moveRemoteKeys(doc, file, ctx.remoteKeyNames);
  ctx.summary.remote_keys.push(...moves);
  return moves.length > 0;
}
