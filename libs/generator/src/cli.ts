import { resolve } from 'node:path';
import { commandCompletion, parseCommandLine, UsageError, versionLine } from '#libs/cli';
import { fluxUrlOf, hasCredentials, originUrl, sameRepository } from '#libs/git/repository-url';
import { SEALING_SCOPES, SealingScope } from '#libs/sealing';
import { normaliseReferenceEnv } from '#libs/validation';
import { registryFrom, sealingCertFrom, suppliedFrom } from './credential-inputs';
import { isSeparateRepository } from './environment-folder';
import { GeneratorInputError } from './errors';
import { repoLimitsFrom } from './repo-limits-env';
import {
  generate,
  GenerateOptions,
  SHIPPED_PHASED_TEMPLATE,
  SHIPPED_SOPS_TEMPLATE,
  SHIPPED_TEMPLATE,
} from './generate';
import { kubectlVersionWarning } from './kubectl-version';
import { preview } from './preview';
import { describeDryRun, describeRehearsal, describeSummary } from './summary-text';

const HELP = `generate-gitops-env: write a customer-specific Flux CD tree to clusters/<cluster-name>/

Usage:
  generate-gitops-env --repo DIR --cluster-name NAME --domain DOMAIN --region REGION --acme-email EMAIL
                      (--infra-only | --sealing-cert FILE) [options]

Required:
  --repo DIR               working copy of the target git repository
  --cluster-name NAME      the new cluster (DNS-1123 label)
  --domain DOMAIN          the DNS name the customer owns; Ingress hosts and external-dns move to it
  --region REGION          cloud region for external-dns and DNS-01 solvers
  --acme-email EMAIL       ACME account e-mail for the ClusterIssuers

Passes:
  --infra-only             first pass: flux-system and the infrastructure layer, no secret of any kind
  --sealing-cert FILE      full pass: the target cluster's sealed-secrets certificate (PEM)
  --rotate-credentials     full pass: generate new credentials even where sealed ones exist
  --secrets-backend NAME   sealed-secrets (default) or sops
  --age-recipient KEY      sops backend: the cluster's age public key (age1...); repeat for more recipients

Options:
  --template DIR           reference repository (default: the shipped template, ${SHIPPED_TEMPLATE};
                           a phased cluster-vars reference ships in ${SHIPPED_PHASED_TEMPLATE}, one
                           with SOPS-encrypted Secrets and a supplied DNS token in ${SHIPPED_SOPS_TEMPLATE};
                           both use --reference-env dev)
  --reference-env ENV      reference environment: a name under clusters/ (default: development) or a
                           repository folder (kubernetes/main; the new cluster goes beside it, or at
                           the same path when --repo is another repository)
  --infra-layer NAME       overlay references: the layer pushed first (default: infrastructure)
  --var KEY=VALUE          cluster-vars references: a value of the new cluster's cluster-vars
                           (issuer, sizes, ...); repeat for more. Domain, region, ACME e-mail
                           and cluster name are derived from the other flags
  --host-map OLD=NEW       references in the layout of Flux's example repository: the new cluster's
                           host for a reference host outside the reference domain (podinfo.staging);
                           repeat for more. Hosts under the reference domain move to --domain
  --path-map OLD=NEW       a path in another repository that names the reference environment (a
                           Kustomization's path in another source, where image automation pushes):
                           the new cluster's path (./staging=./acme); repeat for more. Unmapped ones
                           are warnings
  --replace OLD=NEW        the last rewrite of the new cluster's own files (never shared ones): every
                           OLD, as literal text, becomes NEW (a CNI's cluster name, an API endpoint);
                           repeat for more. Encrypted files are not rewritten
  --strict                 refuse the pass while any identifier of the reference is left in the new
                           cluster's files (the summary's leftovers, each with the flag that moves it)
  --reference-domain DNS   the reference environment's domain (default: its cluster settings' *DOMAIN
                           value or its external-dns domain filter)
  --scope SCOPE            sealing scope: strict (default), namespace-wide, cluster-wide
  --registry-auth FILE     docker config JSON with registry pull credentials
  --credentials FILE       credentials only their issuer can create (a DNS provider's API token, an SMTP
                           password): YAML or JSON {"<namespace>/<secret>/<key>": "<value>"}, mode 0600
  --source-url URL         GitRepository URL Flux syncs from (default: --repo's origin remote; the
                           reference's URL when --repo is the reference's own repository; refused
                           when --repo is another repository without an origin)
  --source-branch BRANCH   GitRepository branch (default: the reference's)
  --no-validate            skip validation (kustomize build and schema check of every written layer)
  --dry-run                plan the pass without writing it and print what would change (a unified
                           diff, sealed values as <sealed: N keys>), the credential plan and the
                           warnings; writes nothing
  --json                   print a machine-readable summary on stdout
  -h, --help               this text
  --version                the version
  completion bash|zsh|fish (instead of options) the shell completion script, e.g.
                           source <(generate-gitops-env completion bash)
  drift (instead of a pass) how a scaffolded environment differs from what its recorded reference
                           commit renders, and how far that commit is behind (generate-gitops-env drift --help)
  upgrade (instead of a pass) the reference's change since the recorded commit, merged into the
                           environment, credentials kept (generate-gitops-env upgrade --help)
  retire (instead of a pass) remove an environment's own files, its last live commit tagged
                           (generate-gitops-env retire --help)
  rotate (instead of a pass) seal an environment's credentials anew, with new values, for its
                           cluster's current certificate (generate-gitops-env rotate --help)

Registry pull credentials for the full pass come from REGISTRY_SERVER, REGISTRY_USERNAME and
REGISTRY_PASSWORD or from --registry-auth FILE, never from command-line values. Supplied credentials
(keys named in a Secret's gitops-scaffolder.io/supplied annotation; keys named like another system's
credential such as api-token; whole files such as config.toml; hosts and domains that are encrypted)
come from --credentials FILE and are never invented; the full pass refuses to run without them, listing
every missing key at once. Only password-like keys and usernames the new cluster owns are generated.
Files are read without following links and up to MAX_REPO_FILE_BYTES (default 5 MiB) each; a
repository over MAX_REPO_FILES (20000) files or MAX_REPO_BYTES (256 MiB) is refused, as the service does.
Exit codes: 0 written, 1 the tree failed validation or an internal error, 2 bad input.
`;

/** Every option of the command (parseArgs's table; its names feed "did you mean" and the shell completion). */
const OPTIONS = {
  repo: { type: 'string' },
  template: { type: 'string' },
  'reference-env': { type: 'string' },
  'cluster-name': { type: 'string' },
  domain: { type: 'string' },
  region: { type: 'string' },
  'acme-email': { type: 'string' },
  'infra-only': { type: 'boolean' },
  'infra-layer': { type: 'string' },
  'sealing-cert': { type: 'string' },
  'rotate-credentials': { type: 'boolean' },
  scope: { type: 'string' },
  'secrets-backend': { type: 'string' },
  'age-recipient': { type: 'string', multiple: true },
  'registry-auth': { type: 'string' },
  credentials: { type: 'string' },
  'source-url': { type: 'string' },
  'source-branch': { type: 'string' },
  var: { type: 'string', multiple: true },
  'host-map': { type: 'string', multiple: true },
  'path-map': { type: 'string', multiple: true },
  replace: { type: 'string', multiple: true },
  strict: { type: 'boolean' },
  'reference-domain': { type: 'string' },
  'no-validate': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

const REQUIRED = ['repo', 'cluster-name', 'domain', 'region', 'acme-email'];
const USAGE_LINE = `${HELP.split('\n\n')[1]}\n(generate-gitops-env --help for every option)\n`;

/** `--var KEY=VALUE` flags as a map; the generator checks the names against the reference. */
/** Repeated `--<option> KEY=VALUE` flags as a mapping. */
function parsePairs(option: string, flags: string[], shape: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new GeneratorInputError(`--${option} ${JSON.stringify(flag.slice(0, 40))} must be ${shape}`);
    pairs[flag.slice(0, eq)] = flag.slice(eq + 1);
  }
  return pairs;
}

/** Why another repository without an origin remote cannot be written without --source-url. */
const NO_ORIGIN =
  "--repo has no origin remote, so the new cluster's GitRepository would keep the reference's URL and sync the reference's repository: give --source-url URL (the URL Flux will read --repo at) or add an origin remote";

/**
 * The URL the new cluster's Flux fetches from: --source-url; else --repo's origin remote, unless it is
 * the reference's own repository (its GitRepository URL is kept as Flux knows it). Never one with credentials.
 * Another repository without an origin gets no URL and the problem (the generator refuses the pass with it):
 * the new cluster's GitRepository would keep the reference's URL, and the new cluster would sync the reference.
 */
function sourceUrlFor(
  given: string | undefined,
  repoDir: string,
  templateDir: string,
): Pick<GenerateOptions, 'sourceUrl' | 'sourceUrlProblem'> {
  if (given !== undefined) {
    if (hasCredentials(given))
      throw new GeneratorInputError(
        '--source-url must not carry credentials: Flux reads them from the GitRepository secretRef',
      );
    return { sourceUrl: given };
  }
  const target = originUrl(repoDir);
  const reference = originUrl(templateDir);
  if (!target) return isSeparateRepository(repoDir, templateDir) ? { sourceUrlProblem: NO_ORIGIN } : {};
  if (reference && sameRepository(reference, target)) return {};
  if (hasCredentials(target))
    throw new GeneratorInputError(
      "--repo's origin remote carries credentials, which would be written into the GitRepository: give --source-url",
    );
  return { sourceUrl: fluxUrlOf(target) };
}

/** What each option's value completes to in a shell (the rest: free text). */
const VALUE_HINTS = {
  repo: 'dir',
  template: 'dir',
  'sealing-cert': 'file',
  'registry-auth': 'file',
  credentials: 'file',
  scope: SEALING_SCOPES,
  'secrets-backend': ['sealed-secrets', 'sops'],
} as const;

/** `generate-gitops-env completion bash|zsh|fish`: the script, from the option table. */
export const completion = commandCompletion('generate-gitops-env', OPTIONS, HELP, VALUE_HINTS);

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: Record<string, any>;
  try {
    if (argv[0] === 'completion') {
      process.stdout.write(completion(argv[1]));
      return 0;
    }
    ({ values } = parseCommandLine(argv, OPTIONS, false));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`generate-gitops-env: ${e.message}\n${USAGE_LINE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${versionLine('generate-gitops-env')}\n`);
    return 0;
  }
  const missing = REQUIRED.filter((flag) => !values[flag]).map((flag) => `--${flag}`);
  const noPass = !values['infra-only'] && !values['sealing-cert'] && values['secrets-backend'] !== 'sops';
  if (missing.length > 0 || noPass) {
    const problems = [
      ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
      ...(noPass
        ? ['choose a pass: --infra-only (the first pass: no secrets) or --sealing-cert FILE (the full pass)']
        : []),
    ];
    process.stderr.write(`generate-gitops-env: ${problems.join('; ')}\n${USAGE_LINE}`);
    return 2;
  }
  try {
    if (values['infra-only'] && values['sealing-cert'])
      throw new GeneratorInputError('--infra-only and --sealing-cert exclude each other');
    const backend = values['secrets-backend'] ?? 'sealed-secrets';
    if (backend !== 'sealed-secrets' && backend !== 'sops')
      throw new GeneratorInputError('--secrets-backend must be sealed-secrets or sops');
    const scope = (values.scope ?? 'strict') as SealingScope;
    if (!SEALING_SCOPES.includes(scope))
      throw new GeneratorInputError(`--scope must be one of ${SEALING_SCOPES.join(', ')}`);
    const sealingCertPem = sealingCertFrom(values['sealing-cert']);
    const pass = values['infra-only'] ? 'infra' : 'full';
    const options: GenerateOptions = {
      repoDir: resolve(values.repo),
      repoLimits: repoLimitsFrom(env),
      templateDir: values.template ? resolve(values.template) : undefined,
      referenceEnv: normaliseReferenceEnv(values['reference-env']),
      clusterName: values['cluster-name'],
      domain: values.domain,
      region: values.region,
      acmeEmail: values['acme-email'],
      pass,
      sealingCertPem,
      // The infra pass takes them too: it rehearses the full pass, whose pull secrets need them.
      registry: registryFrom(env, values['registry-auth']),
      suppliedCredentials: suppliedFrom(values.credentials),
      rotateCredentials: Boolean(values['rotate-credentials']),
      sealingScope: scope,
      secretsBackend: backend,
      ageRecipients: values['age-recipient'],
      infraLayer: values['infra-layer'],
      clusterVars: parsePairs('var', values.var ?? [], 'KEY=VALUE'),
      hostMap: parsePairs('host-map', values['host-map'] ?? [], 'OLD=NEW'),
      pathMap: parsePairs('path-map', values['path-map'] ?? [], 'OLD=NEW'),
      replace: parsePairs('replace', values.replace ?? [], 'OLD=NEW'),
      strict: Boolean(values.strict),
      referenceDomain: values['reference-domain'],
      ...sourceUrlFor(
        values['source-url'],
        resolve(values.repo),
        values.template ? resolve(values.template) : SHIPPED_TEMPLATE,
      ),
      sourceBranch: values['source-branch'],
      validate: !values['no-validate'],
    };
    // Validation builds with the first kubectl on PATH: say so once when that is not the pinned one.
    const kubectlWarning = options.validate ? await kubectlVersionWarning() : null;
    if (kubectlWarning) process.stderr.write(`generate-gitops-env: warning: ${kubectlWarning}\n`);
    if (values['dry-run']) {
      const { summary, changes, rehearsal } = await preview(options);
      const full = rehearsal ? { full_pass_summary: rehearsal } : {};
      process.stdout.write(
        values.json
          ? JSON.stringify({ summary, changes, ...full }, null, 2) + '\n'
          : describeDryRun(summary, changes) + (rehearsal ? describeRehearsal(rehearsal) : ''),
      );
      return 0;
    }
    const result = await generate(options);
    process.stdout.write(
      values.json ? JSON.stringify(result.summary, null, 2) + '\n' : describeSummary(result.summary),
    );
    return 0;
  } catch (e) {
    const message = (e as Error).message.split('\n')[0];
    process.stderr.write(`generate-gitops-env: ${message}\n`);
    return e instanceof GeneratorInputError ? 2 : 1;
  }
}

// void: main() reports its own errors and resolves to the exit code.
if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
