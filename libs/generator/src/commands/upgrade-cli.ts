/** `generate-gitops-env upgrade`: the command line of upgradeEnvironment, and its report as text. */
import { sealingCertFrom } from '../credential-inputs';
import { GeneratorInputError } from '../errors';
import { onEachEnvironment, RECORDED_ENVIRONMENT_OPTIONS } from './each-environment';
import { runSubcommand } from './subcommand';
import type { LineRange } from '../lifecycle/three-way';
import { upgradeEnvironment, UpgradeReport } from '../lifecycle/upgrade';

export const UPGRADE_HELP = `generate-gitops-env upgrade: replay the reference's change since the recorded commit on an environment

Usage:
  generate-gitops-env upgrade --repo DIR --template DIR (--cluster-name NAME | --all) [--to REV]
                              [--sealing-cert FILE | --age-recipient KEY ...] [--dry-run] [--json]

  --repo DIR               working copy of the environment's repository (written unless --dry-run)
  --template DIR           a git working copy of the reference; its history holds the commit the
                           environment's marker (.gitops-scaffolder.json) records
  --cluster-name NAME      the environment
  --all                    every environment a marker in the repository names, one after the other
                           (each refused or conflicted one left as it was; no --sealing-cert or
                           --age-recipient: each cluster has its own)
  --to REV                 the reference revision to upgrade to (default: HEAD)
  --sealing-cert FILE      the cluster's sealed-secrets certificate (PEM): keys and Secrets the
                           reference adds are sealed for it
  --age-recipient KEY      SOPS: the cluster's age public key; repeat for more recipients
  --dry-run                print the plan and write nothing
  --json                   print the report as JSON on stdout
  -h, --help               this text

The recorded commit and the new one are rendered with the inputs the marker records (in scratch
folders; the template's working copy is not touched). A file the reference did not change is kept
byte for byte; one it changed is taken where the environment did not edit it, else merged three-way
(git merge-file); an overlapping edit is a conflict. Files the reference adds are added, files it
deletes removed where unedited and listed where edited. Credentials are never regenerated: a
SealedSecret keeps its ciphertext, gets the keys the reference adds and loses the keys it removes; a
SOPS file is kept while its keys are, and a change of its keys is refused (it needs the data key).
The markers then record the new commit. Nothing is committed: review and commit, as after a pass.
Exit codes: 0 upgraded (or nothing to do, or a dry run's plan), 1 an internal error or a render that
failed, 2 refused (no marker, a marker without the reference commit, --to naming no commit, a SOPS
key change, a key the upgrade cannot know the value of) or bad input, 3 a conflict: nothing written.
With --all, each environment's report (or refusal) is printed; the exit code is 3 when any
conflicted, else 2 when any was refused (the others are upgraded).
`;

const OPTIONS = {
  ...RECORDED_ENVIRONMENT_OPTIONS,
  'sealing-cert': { type: 'string' },
  'age-recipient': { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
} as const;

/** Runs the subcommand with its arguments (after "upgrade"); resolves to the exit code. */
export function upgradeMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runSubcommand(
    {
      name: 'upgrade',
      help: UPGRADE_HELP,
      options: OPTIONS,
      required: ['repo', 'template'],
      run: async (values) => {
        if (values['sealing-cert'] && values['age-recipient'])
          throw new GeneratorInputError('--sealing-cert and --age-recipient exclude each other');
        if (values.all && (values['sealing-cert'] || values['age-recipient']))
          throw new GeneratorInputError(
            '--all takes no --sealing-cert or --age-recipient: each cluster has its own; upgrade such clusters one at a time',
          );
        return onEachEnvironment(
          values,
          env,
          (clusterName, repoLimits) =>
            upgradeEnvironment({
              repoDir: values.repo,
              templateDir: values.template,
              clusterName,
              to: values.to,
              sealingCertPem: sealingCertFrom(values['sealing-cert']),
              ageRecipients: values['age-recipient'],
              dryRun: Boolean(values['dry-run']),
              repoLimits,
            }),
          { text: describeUpgrade, exitOf: (report) => (report.outcome === 'conflicted' ? 3 : 0) },
        );
      },
    },
    argv,
  );
}

const lines = (r: LineRange) => (r.end < r.start ? `before line ${r.start}` : `lines ${r.start}-${r.end}`);
const quoted = (text: string) =>
  text === ''
    ? ['    (nothing)']
    : text
        .replace(/\n$/, '')
        .split('\n')
        .map((l) => `    | ${l}`);

/** The report as text for a person: the commits, each list, each conflict's hunks, then the outcome. */
export function describeUpgrade(report: UpgradeReport): string {
  const out = [
    `cluster ${report.cluster_name} (${report.folders.join(', ')})`,
    `reference commit ${report.reference_commit.slice(0, 12)} -> ${report.reference_target.slice(0, 12)} (${report.commits} commit${report.commits === 1 ? '' : 's'})`,
  ];
  const list = (title: string, paths: string[]) => {
    if (paths.length > 0) out.push(`${title}:`, ...paths.map((p) => `  ${p}`));
  };
  list('added by the reference', report.added);
  list('changed by the reference (not edited here)', report.changed);
  list('merged (edited here and by the reference)', report.merged);
  list('removed (deleted by the reference, not edited here)', report.removed);
  list('kept (deleted by the reference, edited here)', report.kept_edited);
  list('credential files added', report.credentials.files_added);
  list('credential files removed', report.credentials.files_removed);
  list('credential keys added (sealed for the cluster)', report.credentials.keys_added);
  list('credential keys removed', report.credentials.keys_removed);
  list('shared files the reference changed (not upgraded: outside the environment)', report.shared_not_upgraded);
  for (const conflict of report.conflicts) {
    out.push(`conflict: ${conflict.file}${conflict.reason ? ` (${conflict.reason})` : ''}`);
    for (const hunk of conflict.hunks)
      out.push(
        `  ours ${lines(hunk.ours_lines)}, theirs ${lines(hunk.theirs_lines)} (the recorded commit's ${lines(hunk.base_lines)})`,
        '  ours:',
        ...quoted(hunk.ours),
        '  theirs:',
        ...quoted(hunk.theirs),
      );
  }
  out.push(OUTCOMES[report.outcome]);
  return out.join('\n') + '\n';
}

const OUTCOMES: Record<UpgradeReport['outcome'], string> = {
  upgraded: 'upgraded: review and commit the changes',
  'up-to-date': 'nothing to do: the environment is at that commit',
  planned: 'dry run: nothing written',
  conflicted: 'conflict: nothing written; resolve the edits above by hand (or drop them) and upgrade again',
};
