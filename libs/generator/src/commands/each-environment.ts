/**
 * `--all` of drift and upgrade: the command on every environment whose markers are in the working copy, one after
 * the other (an upgrade writes into the same working copy), each refusal reported beside the others' results
 * instead of stopping them. `--cluster-name` and `--all` exclude each other; one of them is required.
 */
import { GeneratorInputError } from '../errors';
import { withRepoLimits } from '../repo-files';
import type { RepoLimits } from '#libs/runtime';
import { repoLimitsFrom } from '../repo-limits-env';
import { markedFolders } from '../lifecycle/environment-markers';

/** The options of a command on recorded environments (drift, upgrade): where, which, to which commit, how to print. */
export const RECORDED_ENVIRONMENT_OPTIONS = {
  repo: { type: 'string' },
  template: { type: 'string' },
  'cluster-name': { type: 'string' },
  all: { type: 'boolean' },
  to: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** One environment's result, or why it was refused (nothing written for it). */
export type EachResult<R> = { cluster_name: string; report: R } | { cluster_name: string; refused: string };

/** The clusters the command runs on: the one named, or every cluster a marker names (sorted). */
async function clustersOf(values: Record<string, any>, limits: RepoLimits | undefined): Promise<string[]> {
  if (values.all && values['cluster-name'])
    throw new GeneratorInputError('--cluster-name and --all exclude each other');
  if (values['cluster-name']) return [values['cluster-name']];
  if (!values.all) throw new GeneratorInputError('give --cluster-name NAME, or --all for every environment');
  const names = await withRepoLimits(limits, async () => markedFolders(values.repo).map((m) => m.marker.cluster_name));
  if (names.length === 0)
    throw new GeneratorInputError(`no ownership marker (.gitops-scaffolder.json) in ${values.repo}`);
  return [...new Set(names)].sort();
}

/** `work` on each cluster in turn; a refusal (GeneratorInputError) is that cluster's result, anything else stops. */
async function eachEnvironment<R>(clusters: string[], work: (cluster: string) => Promise<R>): Promise<EachResult<R>[]> {
  const results: EachResult<R>[] = [];
  for (const cluster of clusters) {
    try {
      results.push({ cluster_name: cluster, report: await work(cluster) });
    } catch (e) {
      if (!(e instanceof GeneratorInputError)) throw e;
      results.push({ cluster_name: cluster, refused: e.message.split('\n')[0] });
    }
  }
  return results;
}

/**
 * What `--all` prints and exits with: each result (its text, or `refused: <why>`), JSON as
 * `{"environments": [...]}`. One named cluster prints and exits as before (its refusal thrown: exit 2).
 */
function printEach<R>(
  results: EachResult<R>[],
  how: { all: boolean; json: boolean; text: (report: R) => string; exitOf: (report: R) => number },
): number {
  if (!how.all) {
    const [only] = results;
    if ('refused' in only) throw new GeneratorInputError(only.refused);
    process.stdout.write(how.json ? JSON.stringify(only.report, null, 2) + '\n' : how.text(only.report));
    return how.exitOf(only.report);
  }
  if (how.json) process.stdout.write(JSON.stringify({ environments: results }, null, 2) + '\n');
  else
    process.stdout.write(
      results
        .map((r) => ('refused' in r ? `cluster ${r.cluster_name}: refused: ${r.refused}\n` : how.text(r.report)))
        .join('\n'),
    );
  const codes = results.map((r) => ('refused' in r ? 2 : how.exitOf(r.report)));
  // A conflict (3) is the one a person must resolve by hand: it wins over a refusal (2).
  return codes.includes(3) ? 3 : codes.includes(2) ? 2 : 0;
}

/**
 * A lifecycle command on the cluster `--cluster-name` names or, with `--all`, on every one in turn: `work` for each
 * (with the repository limits of `env`), then what printEach prints and the exit code it gives.
 */
export async function onEachEnvironment<R>(
  values: Record<string, any>,
  env: NodeJS.ProcessEnv,
  work: (clusterName: string, repoLimits: RepoLimits | undefined) => Promise<R>,
  how: { text: (report: R) => string; exitOf: (report: R) => number },
): Promise<number> {
  const repoLimits = repoLimitsFrom(env);
  const results = await eachEnvironment(await clustersOf(values, repoLimits), (clusterName) =>
    work(clusterName, repoLimits),
  );
  return printEach(results, { all: Boolean(values.all), json: Boolean(values.json), ...how });
}
