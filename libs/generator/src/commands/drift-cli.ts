/** `generate-gitops-env drift`: the command line of computeDrift, parsed as the pass's own (strict, with suggestions). */
import { computeDrift, describeDrift } from '../lifecycle/drift';
import { onEachEnvironment, RECORDED_ENVIRONMENT_OPTIONS } from './each-environment';
import { runSubcommand } from './subcommand';

export const DRIFT_HELP = `generate-gitops-env drift: how an environment differs from what its recorded reference commit renders

Usage:
  generate-gitops-env drift --repo DIR --template DIR (--cluster-name NAME | --all) [--to REV] [--json]

  --repo DIR               working copy of the environment's repository (read, never written)
  --template DIR           a git working copy of the reference; its history holds the commit the
                           environment's marker (.gitops-scaffolder.json) records
  --cluster-name NAME      the environment
  --all                    every environment a marker in the repository names, one after the other
  --to REV                 the reference revision to count commits behind to (default: HEAD)
  --json                   print the report as JSON on stdout
  -h, --help               this text

The recorded commit is read into a scratch folder (the template's working copy, index and refs are
not touched) and rendered with the inputs the marker records; the environment's folders are compared
with it: YAML by its documents (re-indentation, key order and comments are no drift), other files
byte for byte. SealedSecrets and SOPS-encrypted files are listed as credentials, not compared.
Exit codes: 0 compared (drift or not: the last line says which), 1 an internal error or a render
that failed, 2 refused (no marker, a marker from before the reference commit was recorded, a commit
not in the template's history, a file over MAX_REPO_FILE_BYTES) or bad input. With --all, each
environment's report (or refusal) is printed and the exit code is 2 when any was refused.
`;

const OPTIONS = RECORDED_ENVIRONMENT_OPTIONS;

/** Runs the subcommand with its arguments (after "drift"); resolves to the exit code. */
export function driftMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runSubcommand(
    {
      name: 'drift',
      help: DRIFT_HELP,
      options: OPTIONS,
      required: ['repo', 'template'],
      run: (values) =>
        onEachEnvironment(
          values,
          env,
          (clusterName, repoLimits) =>
            computeDrift({
              repoDir: values.repo,
              templateDir: values.template,
              clusterName,
              to: values.to,
              repoLimits,
            }),
          { text: describeDrift, exitOf: () => 0 },
        ),
    },
    argv,
  );
}
