/** `generate-gitops-env rotate`: the command line of rotateCredentials. */
import { registryFrom, sealingCertFrom, suppliedFrom } from '../credential-inputs';
import { GeneratorInputError } from '../errors';
import { repoLimitsFrom } from '../repo-limits-env';
import { rotateCredentials, RotateReport } from '../lifecycle/rotate';
import { runSubcommand } from './subcommand';

export const ROTATE_HELP = `generate-gitops-env rotate: seal an environment's credentials anew for its cluster's current certificate

Usage:
  generate-gitops-env rotate --repo DIR --template DIR --cluster-name NAME --sealing-cert FILE --new-values
                             [--credentials FILE] [--registry-auth FILE] [--dry-run] [--json]

  --repo DIR               working copy of the environment's repository (written unless --dry-run)
  --template DIR           a git working copy of the reference; its history holds the commit the
                           environment's marker (.gitops-scaffolder.json) records
  --cluster-name NAME      the environment
  --sealing-cert FILE      the cluster's current sealed-secrets certificate (PEM)
  --new-values             generate new values (required: the sealed values are the cluster's to read)
  --credentials FILE       the supplied credentials again (as for a pass; mode 0600)
  --registry-auth FILE     registry pull credentials again (or REGISTRY_SERVER/USERNAME/PASSWORD)
  --dry-run                print which files would be replaced; write nothing
  --json                   print the report as JSON on stdout
  -h, --help               this text

The recorded reference commit is rendered again with the recorded inputs and new values, sealed for
--sealing-cert, and each credential file of that render (every SealedSecret the pass makes) replaces
the environment's; no other file changes, and the marker keeps its commit. Nothing is committed:
review and commit, as after a pass; the cluster's controller unseals the new values once Flux applies them.
Exit codes: 0 rotated (or a dry run's plan), 1 an internal error, 2 refused (no marker, a marker without
the reference commit, only the infra pass so far, SOPS Secrets, no --new-values, a supplied or
registry credential not given again) or bad input.
`;

const OPTIONS = {
  repo: { type: 'string' },
  template: { type: 'string' },
  'cluster-name': { type: 'string' },
  'sealing-cert': { type: 'string' },
  'new-values': { type: 'boolean' },
  credentials: { type: 'string' },
  'registry-auth': { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the subcommand with its arguments (after "rotate"); resolves to the exit code. */
export function rotateMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runSubcommand(
    {
      name: 'rotate',
      help: ROTATE_HELP,
      options: OPTIONS,
      required: ['repo', 'template', 'cluster-name', 'sealing-cert'],
      run: async (values) => {
        const report = await rotateCredentials({
          repoDir: values.repo,
          templateDir: values.template,
          clusterName: values['cluster-name'],
          sealingCertPem: sealingCertFrom(values['sealing-cert'])!,
          newValues: values['new-values'] === true,
          suppliedCredentials: suppliedFrom(values.credentials),
          registry: registryFrom(env, values['registry-auth']),
          dryRun: values['dry-run'] === true,
          repoLimits: repoLimitsFrom(env),
        });
        if (report.files_replaced.length === 0)
          throw new GeneratorInputError(`cluster ${report.cluster_name} has no credential the reference seals`);
        process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : describeRotation(report));
        return 0;
      },
    },
    argv,
  );
}

/** The report as text for a person. */
export function describeRotation(report: RotateReport): string {
  return (
    [
      `cluster ${report.cluster_name} (${report.folders.join(', ')}), reference commit ${report.reference_commit.slice(0, 12)}`,
      `${report.objects_sealed} objects sealed with new values for certificate ${report.sealing_cert_sha256}`,
      `${report.dry_run ? 'would replace' : 'replaced'}:`,
      ...report.files_replaced.map((f) => `  ${f}`),
      ...report.not_rotated.map(
        (f) => `not rotated (the reference does not make it; still sealed for the old certificate): ${f}`,
      ),
      report.dry_run ? 'dry run: nothing written' : 'rotated: review and commit the changes',
    ].join('\n') + '\n'
  );
}
