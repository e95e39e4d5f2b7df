/** `generate-gitops-env retire`: the command line of retireEnvironment, parsed as the other subcommands are. */
import { repoLimitsFrom } from '../repo-limits-env';
import { describeRetirement, retireEnvironment } from '../lifecycle/retire';
import { runSubcommand } from './subcommand';

export const RETIRE_HELP = `generate-gitops-env retire: remove an environment's files from its repository, tagging its last live commit

Usage:
  generate-gitops-env retire --repo DIR --cluster-name NAME --confirm NAME [--dry-run] [--json]

  --repo DIR               working copy of the environment's repository (written; commit it yourself)
  --cluster-name NAME      the environment
  --confirm NAME           the cluster's name again: nothing is retired when it differs
  --dry-run                print what would be removed and tagged; write nothing
  --json                   print the plan as JSON on stdout
  -h, --help               this text

Removes exactly the files of the folders whose ownership marker (.gitops-scaffolder.json) names the
cluster (its cluster folder and, in Flux's example layout, its apps/<name> overlay), the entries of
shared kustomizations that list those folders, and the .sops.yaml creation rules that matched only
their files. Shared folders and other environments are never touched. First HEAD is tagged
retired/<name>/<UTC time>; the line "restore with:" brings everything back from that tag.
Refused, with nothing written or tagged (exit 2): a confirmation that differs, no marker for the
cluster, no commit to tag, uncommitted changes in its folders, another environment inside them, or a
Flux Kustomization outside them that still applies one of them.
`;

const OPTIONS = {
  repo: { type: 'string' },
  'cluster-name': { type: 'string' },
  confirm: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the subcommand with its arguments (after "retire"); resolves to the exit code. */
export function retireMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runSubcommand(
    {
      name: 'retire',
      help: RETIRE_HELP,
      options: OPTIONS,
      required: ['repo', 'cluster-name', 'confirm'],
      run: async (values) => {
        const plan = await retireEnvironment({
          repoDir: values.repo,
          clusterName: values['cluster-name'],
          confirm: values.confirm,
          dryRun: values['dry-run'] === true,
          repoLimits: repoLimitsFrom(env),
        });
        process.stdout.write(values.json ? JSON.stringify(plan, null, 2) + '\n' : describeRetirement(plan));
        return 0;
      },
    },
    argv,
  );
}
