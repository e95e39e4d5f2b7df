import Ajv, { ErrorObject } from 'ajv';
import { FORGE_KINDS } from '#libs/delivery/forge-port';
import type { DeliveryRequest, ScaffoldRequestedData } from '#libs/events';
import {
  canonicalReferenceEnv,
  clusterVarsProblem,
  hostMapProblem,
  pathMapValueProblem,
  referenceEnvProblem,
  replacementProblem,
} from '#libs/generator';
import { branchProblem, isScpLike, normaliseRepoUrl, repoUrlProblem } from '#libs/git';
import { CertificateError, parseSealingCertificate, SealingCertificate } from '#libs/sealing';
import { isAgeRecipient } from '#libs/sealing/sops';
import {
  FieldCheck,
  isClusterName,
  isDomain,
  isEmail,
  isHostName,
  isReferenceEnv,
  normaliseReferenceEnv,
  isRegion,
} from '#libs/validation';
import { ApiError, FieldProblem, invalid, invalidAll } from '../common/api-error';

/** JSON schema of POST /api/v1/scaffolds (also the OpenAPI request body). */
export const CREATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['cluster_name', 'domain', 'region', 'acme_email', 'target'],
  properties: {
    secrets_backend: { enum: ['sealed-secrets', 'sops'] },
    cluster_vars: {
      type: 'object',
      maxProperties: 100,
      propertyNames: { type: 'string', maxLength: 100 },
      additionalProperties: { type: 'string', maxLength: 1024 },
    },
    host_map: {
      type: 'object',
      maxProperties: 200,
      propertyNames: { type: 'string', maxLength: 253 },
      additionalProperties: { type: 'string', maxLength: 253 },
    },
    path_map: {
      type: 'object',
      maxProperties: 100,
      propertyNames: { type: 'string', maxLength: 512 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    // What the generator's --replace does; OLD and NEW are identifiers (a cluster name, an endpoint, a URL).
    replace: {
      type: 'object',
      maxProperties: 100,
      propertyNames: { type: 'string', maxLength: 512 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    strict: { type: 'boolean' },
    reference_domain: { type: 'string', maxLength: 253 },
    reference_env: { type: 'string', maxLength: 200 },
    cluster_name: { type: 'string', maxLength: 63 },
    domain: { type: 'string', maxLength: 253 },
    region: { type: 'string', maxLength: 32 },
    acme_email: { type: 'string', maxLength: 254 },
    credentials_secret: {
      type: 'object',
      additionalProperties: false,
      required: ['namespace', 'name'],
      properties: { namespace: { type: 'string', maxLength: 63 }, name: { type: 'string', maxLength: 253 } },
    },
    delivery: {
      type: 'object',
      additionalProperties: false,
      required: ['mode'],
      properties: {
        mode: { enum: ['push', 'merge_request'] },
        forge: { enum: [...FORGE_KINDS] },
        api_url: { type: 'string', maxLength: 2048 },
        auto_merge: { type: 'boolean' },
      },
    },
    repo: {
      type: 'object',
      additionalProperties: false,
      properties: {
        url: { type: 'string', maxLength: 2048 },
        branch: { type: 'string', maxLength: 200 },
        flux_url: { type: 'string', maxLength: 2048 },
      },
    },
    target: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      properties: {
        sealing_cert_pem: { type: 'string', maxLength: 65536 },
        age_recipients: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', maxLength: 100 } },
        kubeconfig_secret: {
          type: 'object',
          additionalProperties: false,
          required: ['namespace', 'name', 'key'],
          properties: { namespace: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' } },
        },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: true });
/** At most this many problems are reported (a body of 75,000 unknown fields gets 20 lines, not 75,000). */
const MAX_PROBLEMS = 20;
const validateShape = ajv.compile(CREATE_SCHEMA);

export type CreateTarget =
  | { kind: 'sealing_cert'; cert: SealingCertificate }
  | { kind: 'kubeconfig_secret'; ref: { namespace: string; name: string; key: string } }
  | { kind: 'age_recipients'; recipients: string[] };

/** A validated request: the ScaffoldRequested data without the caller, and the target with its parsed certificate. */
export type CreateRequest = Omit<ScaffoldRequestedData, 'target' | 'requested_by'> & { target: CreateTarget };

/** Every shape problem, unknown fields first (a misspelt field is one problem, not a missing one), without repeats. */
function shapeProblems(errors: ErrorObject[]): FieldProblem[] {
  const all = errors.map((e) => ({
    field: fieldOf(e),
    problem: describeAjv(e),
    unknown: e.keyword === 'additionalProperties',
  }));
  const ordered = [...all.filter((p) => p.unknown), ...all.filter((p) => !p.unknown)];
  const seen = new Set<string>();
  return ordered
    .filter((p) => !seen.has(`${p.field}: ${p.problem}`) && seen.add(`${p.field}: ${p.problem}`))
    .slice(0, MAX_PROBLEMS)
    .map(({ field, problem }) => ({ field, problem }));
}

function fieldOf(err: ErrorObject): string {
  const path = err.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (err.keyword === 'additionalProperties')
    return [path, (err.params as any).additionalProperty].filter(Boolean).join('.');
  if (err.keyword === 'required') return [path, (err.params as any).missingProperty].filter(Boolean).join('.');
  return path || 'body';
}

function describeAjv(err: ErrorObject): string {
  if (err.keyword === 'additionalProperties') return 'unknown field';
  if (err.keyword === 'required') return 'is required';
  if (err.keyword === 'minProperties' || err.keyword === 'maxProperties')
    return 'give exactly one of sealing_cert_pem, kubeconfig_secret or age_recipients';
  return err.message ?? 'is invalid';
}

const TRANSPORT_HELPER = /^[A-Za-z0-9+._-]*::/;

/**
 * A repository URL git may be handed: an allowed scheme, an allowed host, no option-looking or
 * transport-helper form, and one form (normaliseRepoUrl) to check and to give git, so its host is
 * checked as git will reach it.
 */
export function checkRepoUrl(url: string, allowedSchemes: string[], allowedHosts: string[] = []): string | null {
  if (url.startsWith('-')) return 'must not start with "-"';
  if (/[\s\0]/.test(url)) return 'must not contain whitespace or NUL';
  // git's `<transport>::<address>` form runs a transport helper; `::` elsewhere is an IPv6 literal host.
  if (TRANSPORT_HELPER.test(url)) return 'transport helpers (ext::) are not allowed';
  const scheme = isScpLike(url) ? 'ssh' : /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return 'must be a URL with a scheme (https://, ssh://, or user@host:path)';
  if (!allowedSchemes.includes(scheme))
    return `scheme "${scheme}" is not allowed (allowed: ${allowedSchemes.join(', ')})`;
  // Then the one form's own refusals: a query string (where tokens get pasted: ?private_token=...), a path a server could read as another repository.
  const problem = (isScpLike(url) ? null : userinfoProblem(url, scheme)) ?? repoUrlProblem(url);
  if (problem || allowedHosts.length === 0 || scheme === 'file') return problem;
  const { hostname, port } = new URL(normaliseRepoUrl(url));
  return hostAllowed(hostname, port, allowedHosts)
    ? null
    : `host ${hostname} is not one of GIT_ALLOWED_HOSTS (${allowedHosts.join(', ')})`;
}

/** GIT_ALLOWED_HOSTS patterns: `host`, `host:port`, `*.domain` (any name below domain, not domain itself) or `[IPv6]`, optionally `:port`. */
function hostAllowed(hostname: string, port: string, patterns: string[]): boolean {
  return patterns.some((raw) => {
    const [pattern, patternPort] = raw.toLowerCase().split(/:(?=\d+$)/);
    if (patternPort !== undefined && patternPort !== port) return false;
    if (pattern.startsWith('[')) return hostname === ipv6Literal(pattern);
    return pattern.startsWith('*.')
      ? hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1
      : hostname === pattern;
  });
}

/** `[2001:DB8:0::1]` as URL parsing writes it (`[2001:db8::1]`), so one address matches however it was typed. */
function ipv6Literal(bracketed: string): string | undefined {
  try {
    return new URL(`http://${bracketed}/`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Credentials never come with a request (they would be stored in the event log and written into the
 * cluster's GitRepository): git credentials are the service's (GIT_CREDENTIALS_DIR). An ssh URL may
 * name its user (git@), nothing else may carry user information.
 */
function userinfoProblem(url: string, scheme: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.password !== '' || (parsed.username !== '' && scheme !== 'ssh')) {
    return 'must not carry credentials (user information); git credentials come from the service (GIT_CREDENTIALS_DIR)';
  }
  return null;
}

/** The URL Flux's GitRepository fetches from (when it differs from the one the scaffolder pushes to). */
const FLUX_SCHEMES = ['https', 'http', 'ssh'];
function checkFluxUrl(url: string, allowedHosts: string[] = []): string | null {
  if (isScpLike(url)) return 'Flux needs an ssh:// URL (ssh://user@host/path), not user@host:path';
  return checkRepoUrl(url, FLUX_SCHEMES, allowedHosts);
}

/**
 * Validates a create body completely before anything is appended, reporting every problem at once (400): the
 * shape's, then each field's own, the target's. A field whose shape is wrong is not checked further (one
 * problem for it, not two). Refusals of a service setting (422) come only once the request itself is sound.
 */
export function parseCreateRequest(
  body: unknown,
  opts: {
    allowedSchemes: string[];
    allowedHosts?: string[];
    platformRepoUrl?: string;
    defaultBranch: string;
    acceptKubeconfigTargets?: boolean;
  } & ReferenceSettings,
): CreateRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
  const shape = validateShape(body) ? [] : shapeProblems(validateShape.errors ?? []);
  const problems: FieldProblem[] = [...shape];
  const shapeWrong = (field: string) =>
    shape.some((p) => p.field === field || field.startsWith(`${p.field}.`) || p.field.startsWith(`${field}.`));
  /** Notes what `check` finds wrong with a field, unless its shape already is (then the check could not read it). */
  const note = (field: string, check: () => string | null) => {
    if (shapeWrong(field)) return;
    const problem = check();
    if (problem) problems.push({ field, problem });
  };
  // `./kubernetes` and `kubernetes/` are `kubernetes`: recorded, offered and read in one spelling.
  const b = { ...(body as any), reference_env: normaliseReferenceEnv((body as any).reference_env) };
  if (b.reference_env === undefined) delete b.reference_env;
  const checks: Array<[string, FieldCheck]> = [
    ['cluster_name', isClusterName],
    ['domain', isDomain],
    ['region', isRegion],
    ['acme_email', isEmail],
  ];
  for (const [field, check] of checks) note(field, () => check(b[field]));
  const repoUrl: string | undefined = b.repo?.url ?? opts.platformRepoUrl;
  note('repo.url', () =>
    repoUrl
      ? checkRepoUrl(repoUrl, opts.allowedSchemes, opts.allowedHosts)
      : 'is required (no PLATFORM_REPO_URL default is configured)',
  );
  const branch: string = b.repo?.branch ?? opts.defaultBranch;
  note('repo.branch', () => branchProblem(branch));
  note('repo.flux_url', () =>
    b.repo?.flux_url === undefined ? null : checkFluxUrl(b.repo.flux_url, opts.allowedHosts),
  );
  note('reference_domain', () => (b.reference_domain === undefined ? null : isDomain(b.reference_domain)));
  note('reference_env', () => (b.reference_env === undefined ? null : isReferenceEnv(b.reference_env)));
  if (!shapeWrong('host_map'))
    for (const [from, to] of Object.entries((b.host_map ?? {}) as Record<string, string>))
      note(`host_map.${from}`, () => isHostName(from) ?? isHostName(to));
  if (!shapeWrong('path_map'))
    for (const [from, to] of Object.entries((b.path_map ?? {}) as Record<string, string>))
      note(`path_map.${from}`, () => pathMapValueProblem(from) ?? pathMapValueProblem(to));
  if (!shapeWrong('replace'))
    for (const [from, to] of Object.entries((b.replace ?? {}) as Record<string, string>))
      // OLD as a JSON string's body: the control character it is refused for is never echoed as is.
      note(`replace.${JSON.stringify(from.slice(0, 100)).slice(1, -1)}`, () => replacementProblem(from, to));
  if (!shapeWrong('credentials_secret') && b.credentials_secret)
    problems.push(...credentialsSecretProblems(b.credentials_secret));
  const target = shapeWrong('target') || shapeWrong('secrets_backend') ? undefined : targetOf(b);
  if (target && 'problems' in target) problems.push(...target.problems);
  if (problems.length > 0) throw invalidAll(problems.slice(0, MAX_PROBLEMS));

  const reference = referenceOf(b.reference_env, opts);
  const common = {
    cluster_name: b.cluster_name,
    domain: b.domain,
    region: b.region,
    acme_email: b.acme_email,
    repo_url: normaliseRepoUrl(repoUrl!),
    branch,
    ...(b.repo?.flux_url !== undefined ? { flux_url: normaliseRepoUrl(b.repo.flux_url as string) } : {}),
    ...(b.reference_env !== undefined ? { reference_env: b.reference_env as string } : {}),
    ...clusterVars(b.cluster_vars, reference),
    ...hostMap(b, reference),
    ...(b.path_map && Object.keys(b.path_map).length > 0 ? { path_map: b.path_map as Record<string, string> } : {}),
    ...credentialsSecret(b.credentials_secret, Boolean(opts.acceptKubeconfigTargets)),
    ...(b.delivery !== undefined ? { delivery: b.delivery as DeliveryRequest } : {}),
    ...(b.replace && Object.keys(b.replace).length > 0 ? { replace: b.replace as Record<string, string> } : {}),
    // Strict unless the caller opts out: a run pushes nothing that still names the reference.
    strict: b.strict !== false,
  };
  const checked = (target as { target: CreateTarget }).target;
  if (checked.kind === 'kubeconfig_secret' && !opts.acceptKubeconfigTargets) {
    throw new ApiError(
      422,
      'unsupported_target',
      `target.kubeconfig_secret: reading the target cluster needs ${MANAGEMENT_CLUSTER}; give target.sealing_cert_pem`,
    );
  }
  return { ...common, target: checked };
}

/**
 * The request's target, or every problem with it. The backend and the target must agree: SOPS takes age
 * public keys, Sealed Secrets a certificate or a cluster to fetch it from.
 */
function targetOf(b: any): { target: CreateTarget } | { problems: FieldProblem[] } {
  const sops = b.secrets_backend === 'sops';
  if (sops !== Boolean(b.target.age_recipients)) {
    const problem = sops
      ? 'secrets_backend sops needs target.age_recipients'
      : 'target.age_recipients needs secrets_backend sops';
    return { problems: [{ field: 'target', problem }] };
  }
  if (sops) {
    const recipients = b.target.age_recipients as string[];
    const problems = recipients.flatMap((r, i) =>
      isAgeRecipient(r)
        ? []
        : [{ field: `target.age_recipients.${i}`, problem: 'must be an age public key (age1...)' }],
    );
    return problems.length > 0 ? { problems } : { target: { kind: 'age_recipients', recipients } };
  }
  if (b.target.kubeconfig_secret) {
    const ref = b.target.kubeconfig_secret;
    const problems = kubeconfigSecretProblems(ref);
    return problems.length > 0
      ? { problems }
      : { target: { kind: 'kubeconfig_secret', ref: { namespace: ref.namespace, name: ref.name, key: ref.key } } };
  }
  try {
    return { target: { kind: 'sealing_cert', cert: parseSealingCertificate(b.target.sealing_cert_pem) } };
  } catch (e) {
    if (e instanceof CertificateError) return { problems: [{ field: 'target.sealing_cert_pem', problem: e.message }] };
    throw e;
  }
}

/** The reference the service generates from (what cluster_vars names are checked against). */
type ReferenceSettings = {
  steps: { templateDir?: string; referenceEnv: string };
  /** What else than steps.referenceEnv a request may name (REFERENCE_ENVS); nothing else of the template. */
  referenceEnvs?: readonly string[];
};

/** Whether a request may name `referenceEnv`: the service's own or one of REFERENCE_ENVS (`dev` and `clusters/dev` alike). */
export function offersReferenceEnv(opts: ReferenceSettings, referenceEnv: string): boolean {
  const offered = [opts.steps.referenceEnv, ...(opts.referenceEnvs ?? [])].map(canonicalReferenceEnv);
  return offered.includes(canonicalReferenceEnv(referenceEnv));
}

/**
 * The reference a request generates from: the service's template with the request's environment
 * (a name under clusters/ or a folder such as kubernetes/main), which must exist there (422 otherwise,
 * before anything is appended), or the service's own REFERENCE_ENV.
 */
function referenceOf(referenceEnv: string | undefined, opts: ReferenceSettings): ReferenceSettings {
  if (referenceEnv === undefined) return opts;
  // Only the environments the service offers: any other folder of its template (another customer's) is none of
  // the caller's business, and the answer does not list what the template holds.
  if (!offersReferenceEnv(opts, referenceEnv))
    throw new ApiError(
      422,
      'reference_env_unknown',
      `reference_env: ${referenceEnv} is not a reference environment this service offers`,
    );
  if (referenceEnvProblem(opts.steps.templateDir, referenceEnv) !== null)
    throw new ApiError(
      422,
      'reference_env_unknown',
      `reference_env: ${referenceEnv} is offered but missing from the service's template (its configuration)`,
    );
  return { ...opts, steps: { ...opts.steps, referenceEnv } };
}

/** Cluster-vars values, checked against the service's reference before anything is appended. */
function clusterVars(
  vars: Record<string, string> | undefined,
  opts: ReferenceSettings,
): { cluster_vars?: Record<string, string> } {
  if (!vars || Object.keys(vars).length === 0) return {};
  const problem = clusterVarsProblem(opts.steps.templateDir, opts.steps.referenceEnv, vars);
  if (problem) throw invalid(`cluster_vars.${problem.key}`, problem.problem);
  return { cluster_vars: vars };
}

/** The host map and reference domain, checked against the service's reference: every host it has must get a place. */
function hostMap(
  b: { domain: string; host_map?: Record<string, string>; reference_domain?: string },
  opts: ReferenceSettings,
): { host_map?: Record<string, string>; reference_domain?: string } {
  const problem = hostMapProblem(opts.steps.templateDir, opts.steps.referenceEnv, {
    domain: b.domain,
    hostMap: b.host_map,
    referenceDomain: b.reference_domain,
  });
  if (problem) throw invalid(problem.field, problem.problem);
  return {
    ...(b.host_map && Object.keys(b.host_map).length > 0 ? { host_map: b.host_map } : {}),
    ...(b.reference_domain !== undefined ? { reference_domain: b.reference_domain } : {}),
  };
}

const MANAGEMENT_CLUSTER = 'access to the management cluster (KUBECONFIG, a service account, or EXECUTOR=kubernetes)';
const SECRET_KEY = /^[-._a-zA-Z0-9]{1,253}$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** What is wrong with the reference to the management-cluster Secret holding the supplied credentials. */
function credentialsSecretProblems(ref: { namespace: string; name: string }): FieldProblem[] {
  const namespaceProblem = isClusterName(ref.namespace);
  return [
    ...(namespaceProblem ? [{ field: 'credentials_secret.namespace', problem: namespaceProblem }] : []),
    ...(DNS_SUBDOMAIN.test(ref.name)
      ? []
      : [{ field: 'credentials_secret.name', problem: 'must be a DNS-1123 subdomain' }]),
  ];
}

/** The management-cluster Secret holding the supplied credentials (a reference, checked already; read when it is used). */
function credentialsSecret(
  ref: { namespace: string; name: string } | undefined,
  accepted: boolean,
): { credentials_secret?: { namespace: string; name: string } } {
  if (!ref) return {};
  if (!accepted)
    throw new ApiError(
      422,
      'unsupported_credentials_secret',
      `credentials_secret: reading it needs ${MANAGEMENT_CLUSTER}`,
    );
  return { credentials_secret: { namespace: ref.namespace, name: ref.name } };
}

/** What is wrong with a target's kubeconfig Secret reference. */
function kubeconfigSecretProblems(ref: { namespace: string; name: string; key: string }): FieldProblem[] {
  const namespaceProblem = isClusterName(ref.namespace);
  return [
    ...(namespaceProblem ? [{ field: 'target.kubeconfig_secret.namespace', problem: namespaceProblem }] : []),
    ...(ref.name.length <= 253 && DNS_SUBDOMAIN.test(ref.name)
      ? []
      : [{ field: 'target.kubeconfig_secret.name', problem: 'must be a DNS-1123 subdomain' }]),
    ...(SECRET_KEY.test(ref.key)
      ? []
      : [
          {
            field: 'target.kubeconfig_secret.key',
            problem: 'must be a Secret data key (letters, digits, "-", "_", ".")',
          },
        ]),
  ];
}
