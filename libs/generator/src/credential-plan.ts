import { parse as parseYaml } from 'yaml';
import { GeneratorInputError } from './errors';
import type { ReferenceObject } from './reference';
import { keyKind, KeyKind, namesConnectionSetting, nameWords } from './secret-kinds';
import { dockerConfig, LOWER, PASSWORD_LENGTH, randomString, RegistryCredentials, secretValues } from './credentials';

/**
 * What becomes of each key of each reference Secret in the new cluster:
 * - generated: a fresh value from a CSPRNG (internal passwords, usernames, tokens between components);
 * - derived: a value that embeds credentials of any Secret of the environment (URLs, DSNs, key=value and
 *   JSON blobs, base64 user:password pairs), rebuilt from the new values so every Secret agrees;
 * - supplied: a credential only its issuer can create (a DNS provider's token, a Git host's or a
 *   registry's login that a Flux source reads), given by the caller;
 * - configuration: kept as in the reference (database names, hosts, ports);
 * - registry: the registry pull credentials given to the generator;
 * - external: a value an ExternalSecret fetches from a secret store (the entry names the store and the remote key).
 */
/** The classes in the order they are reported. */
export const CREDENTIAL_CLASSES = [
  'generated',
  'derived',
  'supplied',
  'configuration',
  'registry',
  'external',
] as const;
export type CredentialClass = (typeof CREDENTIAL_CLASSES)[number];

export interface CredentialPlanEntry {
  namespace: string;
  name: string;
  key: string;
  class: CredentialClass;
  /** Supplied keys: recognised by the Secret's annotation, by the Flux source that reads the Secret, or by the key's name alone. */
  recognised_by?: SuppliedBy;
  /** Secrets a Flux source reads: the sources (kind, namespace/name, file). */
  used_by?: string[];
  /** Derived keys: the Secrets (namespace/name) whose credentials the value carries. */
  from?: string[];
  /** External keys: the store (`ClusterSecretStore/vault`), the remote key the new cluster reads, and the ExternalSecret. */
  store?: string;
  remote_key?: string;
  external_secret?: string;
}

/** The plain and SOPS-encrypted Secrets among a reference's objects, each once, as the plan reads them. */
export function referenceSecrets(objects: ReferenceObject[]): ReferenceSecret[] {
  const seen = new Set<string>();
  return objects
    .filter(
      (o) =>
        o.kind === 'Secret' &&
        /^v1$/.test(o.apiVersion) &&
        !seen.has(`${o.file}#${o.index}`) &&
        seen.add(`${o.file}#${o.index}`),
    )
    .map((o) => ({ namespace: o.namespace ?? 'default', body: o.body, file: o.file }));
}

/** A reference Secret as the plan reads it. */
export interface ReferenceSecret {
  namespace: string;
  body: any;
  /** Where it is, for messages. */
  file: string;
  /** The Flux sources that read it (another system's credentials: every key supplied). */
  usedBy?: string[];
}

/**
 * How a supplied key was recognised: the Secret's annotation, the Flux source that reads it, its
 * name (another system's credential, or a host, domain or setting whose value is encrypted), a whole
 * file (by its name, a generator's `files:` entry or a structured value), or a readable value the
 * generator cannot tell to be the cluster's own credential.
 */
export type SuppliedBy = 'annotation' | 'source' | 'name' | 'file' | 'value';

/** Values the caller supplies, by "<namespace>/<secret-name>/<key>". */
export type SuppliedCredentials = Record<string, string>;

export const SUPPLIED_ANNOTATION = 'gitops-scaffolder.io/supplied';
/** Keys the reference says are the cluster's own credentials, generated whatever their names suggest. */
export const GENERATED_ANNOTATION = 'gitops-scaffolder.io/generated';
/** `gitops-scaffolder.io/template.<KEY>`: how a key's value is built, from `{{<namespace>/<secret>/<key>}}` references and text. */
export const TEMPLATE_ANNOTATION_PREFIX = 'gitops-scaffolder.io/template.';
/** `{{namespace/secret/key}}`: not `${...}`, which Flux's post-build substitution would rewrite first. */
const TEMPLATE_REF = /\{\{\s*([a-z0-9][-a-z0-9]*)\/([a-z0-9][-a-z0-9.]*)\/([-._:a-zA-Z0-9]+)\s*\}\}/g;
/** Key names of values usually built from other credentials: encrypted, they need a template. */
/** A template that is a URL with user information (which may hold {{...}} references, slashes and all). */
const TEMPLATE_URL = /^([a-z][a-z0-9+.-]*:\/\/)((?:\{\{[^}]*\}\}|[^/@\s{])*)@(.*)$/is;
const COMPOSITE_KEY = /(url|uri|dsn|connection[-_.]?string|conn[-_.]?str)$/i;

const USER_KEY = /(^|[-_.])(user|username|login)$/i;
const DOCKER_KEYS = new Set(['.dockerconfigjson', '.dockercfg']);
/** A value that holds others in a structure (URL, DSN, key=value, JSON/YAML, user:password), not a longer password. */
const STRUCTURED = /[:@/=;{}\n]/;
const MIN_EMBEDDED = 4;

/** Keys may name a value inside a generator's encrypted file: `<file key>:<path>` (config.yaml:database.password). */
const CREDENTIAL_KEY = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[-._:a-zA-Z0-9]+$/;

/** The name a key's class is decided by: the key, or for a value inside a generator's file the last step of its path. */
function leafName(key: string): string {
  const colon = key.lastIndexOf(':');
  return colon < 0
    ? key
    : key
        .slice(colon + 1)
        .split('.')
        .pop()!;
}

/**
 * A supplied-credentials document (YAML or JSON): a mapping of "<namespace>/<secret>/<key>" to a
 * non-empty string. `where` names its source in errors; errors name keys, never values.
 */
export function parseSuppliedCredentials(text: string, where: string): SuppliedCredentials {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    throw new GeneratorInputError(`${where} is not YAML or JSON`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new GeneratorInputError(`${where} must be a mapping of "<namespace>/<secret>/<key>" to values`);
  for (const [key, value] of Object.entries(doc)) {
    if (!CREDENTIAL_KEY.test(key))
      throw new GeneratorInputError(
        `${where}: ${JSON.stringify(key.slice(0, 80))} is not "<namespace>/<secret>/<key>"`,
      );
    if (typeof value !== 'string' || value.length === 0)
      throw new GeneratorInputError(`${where}: ${key} must be a non-empty string`);
  }
  return doc as SuppliedCredentials;
}

/** The supplied keys a plan needs and the given credentials lack. */
export function missingSupplied(entries: CredentialPlanEntry[], supplied: SuppliedCredentials | undefined): string[] {
  return entries
    .filter((e) => e.class === 'supplied' && supplied?.[keyId(e.namespace, e.name, e.key)] === undefined)
    .map((e) => keyId(e.namespace, e.name, e.key));
}

const secretId = (namespace: string, name: string) => `${namespace}/${name}`;
const keyId = (namespace: string, name: string, key: string) => `${namespace}/${name}/${key}`;

interface KeyState {
  secret: string;
  key: string;
  /** The reference value ('' where it is SOPS-encrypted: unreadable, and not needed). */
  old: string;
  class: CredentialClass;
  /** A template the reference declares for the key. */
  template?: string;
  recognisedBy?: SuppliedBy;
  /** What the key holds, where its class was decided by that. */
  kind?: KeyKind;
  /** The Flux sources that read the key's Secret. */
  usedBy?: string[];
  fresh?: Buffer;
  from?: string[];
}

/** Text forms a credential takes inside another value: as it is, and percent-encoded (URLs, DSNs). */
function forms(old: string, fresh: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [[old, fresh]];
  const encoded = encodeURIComponent(old);
  if (encoded !== old) pairs.push([encoded, encodeURIComponent(fresh)]);
  return pairs;
}

/** A whole value that is base64 text (a Basic pair "user:password", a config blob). */
function base64Text(value: string): string | null {
  if (value.length < 8 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) return null;
  const text = Buffer.from(value, 'base64').toString('utf8');
  return /^[\x20-\x7e\n\r\t]+$/.test(text) && Buffer.from(text, 'utf8').toString('base64') === value ? text : null;
}

function replaceAll(text: string, replacements: Array<[string, string]>): string {
  let out = text;
  for (const [from, to] of replacements) out = out.split(from).join(to);
  return out;
}

/**
 * The credential plan of a whole reference environment: every key of every Secret classified, fresh
 * values decided once, and derived values rebuilt across Secrets (a DATABASE_URL in one Secret
 * carries the new password of the postgres Secret it names). Values leave only through `valuesFor`,
 * to be sealed or encrypted; `entries` carries classes, never a value.
 */
export class CredentialPlan {
  private constructor(
    private readonly keys: KeyState[],
    /** Secret id -> where it is, for messages. */
    private readonly secrets: Map<string, string>,
    readonly warnings: string[],
    private readonly registry: RegistryCredentials | undefined,
  ) {}

  static build(
    secrets: ReferenceSecret[],
    opts: { registry?: RegistryCredentials; supplied?: SuppliedCredentials; requireSupplied: boolean },
  ): CredentialPlan {
    const warnings: string[] = [];
    const untemplated: string[] = [];
    const keys = secrets.flatMap((s) => classify(s, untemplated));
    const candidates = keys.filter((k) => k.class === 'generated' || k.class === 'supplied');
    // Before the missing ones are counted: a readable file that carries the cluster's credentials is rebuilt, not asked for.
    for (const k of keys.filter((k) => k.old.length > 0 && (k.class === 'generated' || byShape(k)))) {
      const carried = carriedBy(k, candidates);
      if (carried.length > 0)
        Object.assign(k, {
          class: 'derived',
          recognisedBy: undefined,
          from: [...new Set(carried.map((c) => c.secret))].sort(),
        });
    }
    for (const k of keys.filter((k) => k.class === 'supplied' && k.kind === 'third-party'))
      warnings.push(
        `${k.secret}/${k.key} is taken as a supplied credential by its name alone; annotate the Secret with ${SUPPLIED_ANNOTATION}: "${k.key}" to say so, or ${GENERATED_ANNOTATION} if the cluster owns it`,
      );
    const lacking = keys.filter((k) => k.class === 'supplied' && opts.supplied?.[`${k.secret}/${k.key}`] === undefined);
    const missing = lacking.map((k) => `${k.secret}/${k.key}`);
    if (untemplated.length > 0 || (missing.length > 0 && opts.requireSupplied))
      throw new GeneratorInputError(refusal(opts.requireSupplied ? lacking : [], untemplated));
    const replacements = freshValues(keys, opts.supplied ?? {});
    const byId = new Map(keys.map((k) => [`${k.secret}/${k.key}`, k]));
    for (const k of keys.filter((k) => k.class === 'derived')) {
      if (k.template === undefined) k.fresh = Buffer.from(rebuild(k.old, replacements));
      else if (templateRefs(k.template).some((id) => missing.includes(id))) {
        // A pass that needs no supplied value (the infra pass) needs no value built from one either.
        k.from = [...new Set(templateRefs(k.template).map((id) => id.slice(0, id.lastIndexOf('/'))))].sort();
      } else {
        const { value, from } = renderTemplate(k, byId);
        Object.assign(k, { fresh: Buffer.from(value), from });
      }
    }
    const files = new Map(
      secrets.map((s) => [
        secretId(s.namespace, String(s.body?.metadata?.name)),
        `${s.file} Secret ${s.body?.metadata?.name}`,
      ]),
    );
    return new CredentialPlan(keys, files, warnings, opts.registry);
  }

  /** Class per key, in a stable order: for the summary, the CLI's --json and the run's result. */
  get entries(): CredentialPlanEntry[] {
    return this.keys
      .map((k) => {
        const [namespace, name] = k.secret.split('/');
        return {
          namespace,
          name,
          key: k.key,
          class: k.class,
          ...(k.recognisedBy ? { recognised_by: k.recognisedBy } : {}),
          ...(k.usedBy ? { used_by: k.usedBy } : {}),
          ...(k.from ? { from: k.from } : {}),
        };
      })
      .sort((a, b) => `${a.namespace}/${a.name}/${a.key}`.localeCompare(`${b.namespace}/${b.name}/${b.key}`));
  }

  /** The new values of one Secret (configuration kept, the rest as planned). */
  valuesFor(namespace: string, name: string): Record<string, Buffer> {
    const id = secretId(namespace, name);
    if (!this.secrets.has(id)) throw new Error(`Secret ${id} is not part of the credential plan`);
    // A pass that needs no supplied value overall (the infra pass) still writes none empty: the Secret it writes asks for them.
    const lacking = this.keys.filter((k) => k.secret === id && k.class === 'supplied' && k.fresh === undefined);
    if (lacking.length > 0) throw new GeneratorInputError(refusal(lacking, []));
    // Registry pull secrets are built when a Secret is written (a pass that keeps its sealed form needs no registry settings).
    const value = (k: KeyState) =>
      k.class === 'registry'
        ? dockerConfig(this.registry, this.secrets.get(id)!, k.key === '.dockercfg')
        : (k.fresh ?? Buffer.from(k.old));
    return Object.fromEntries(this.keys.filter((k) => k.secret === id).map((k) => [k.key, value(k)]));
  }

  /** The Secrets whose credentials the given Secret's derived values carry, and those that carry its own. */
  relatedTo(namespace: string, name: string): string[] {
    const id = secretId(namespace, name);
    const related = new Set<string>();
    for (const k of this.keys) {
      if (k.secret === id) k.from?.forEach((s) => related.add(s));
      if (k.from?.includes(id)) related.add(k.secret);
    }
    related.delete(id);
    return [...related].sort();
  }
}

function annotatedKeys(annotations: Record<string, string>, annotation: string): Set<string> {
  return new Set(
    String(annotations[annotation] ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
  );
}

function classify(s: ReferenceSecret, untemplated: string[]): KeyState[] {
  const namespace = s.namespace;
  const name = String(s.body?.metadata?.name);
  const annotations: Record<string, string> = s.body?.metadata?.annotations ?? {};
  const annotated = annotatedKeys(annotations, SUPPLIED_ANNOTATION);
  const owned = annotatedKeys(annotations, GENERATED_ANNOTATION);
  // A SOPS-encrypted reference: the key names are readable without any key; the values are not needed.
  const encrypted = Boolean(s.body?.sops);
  // A generator's `files:` entries read whole (binary): files, whatever their names.
  const files = new Set<string>(Array.isArray(s.body?.sops?.files) ? s.body.sops.files : []);
  const keyNames = encrypted
    ? [...Object.keys(s.body?.data ?? {}), ...Object.keys(s.body?.stringData ?? {})]
    : Object.keys(secretValues(s.body));
  const values = encrypted ? {} : secretValues(s.body);
  for (const [annotation, keys] of [
    [SUPPLIED_ANNOTATION, annotated],
    [GENERATED_ANNOTATION, owned],
  ] as const)
    for (const key of keys)
      if (!keyNames.includes(key))
        throw new GeneratorInputError(`${s.file}: Secret ${name} names ${key} in ${annotation}, but has no such key`);
  const templates = Object.entries(annotations).filter(([a]) => a.startsWith(TEMPLATE_ANNOTATION_PREFIX));
  for (const [a] of templates) {
    if (!keyNames.includes(a.slice(TEMPLATE_ANNOTATION_PREFIX.length)))
      throw new GeneratorInputError(`${s.file}: Secret ${name} has ${a}, but no such key`);
  }
  const templateOf = (key: string) => annotations[`${TEMPLATE_ANNOTATION_PREFIX}${key}`];
  const usedBy = s.usedBy ? { usedBy: s.usedBy } : {};
  return [...new Set(keyNames)].sort().map((key): KeyState => {
    const base = { secret: secretId(namespace, name), key, old: values[key]?.toString('utf8') ?? '' };
    // Before the registry class: a source's pull secret logs into its own registry, not the platform's.
    // A template the reference declares still wins: it says how the value is built.
    if (s.usedBy && templateOf(key) === undefined)
      return { ...base, class: 'supplied', recognisedBy: annotated.has(key) ? 'annotation' : 'source', ...usedBy };
    if (DOCKER_KEYS.has(key)) return { ...base, class: 'registry' };
    if (annotated.has(key)) return { ...base, class: 'supplied', recognisedBy: 'annotation' };
    if (templateOf(key) !== undefined) return { ...base, class: 'derived', template: templateOf(key) };
    if (owned.has(key)) return { ...base, class: 'generated' };
    const leaf = leafName(key);
    const unreadable = encrypted && !files.has(key);
    if (unreadable && (namesConnectionSetting(leaf) || builtFromOthers(leaf))) {
      untemplated.push(
        templateHint(
          s,
          name,
          key,
          namesConnectionSetting(leaf)
            ? 'is configuration the new cluster must keep, but it is encrypted for the reference cluster'
            : 'looks like a value built from other credentials, and it is encrypted',
        ),
      );
      return { ...base, class: 'derived' };
    }
    const kind = keyKind(leaf, encrypted ? undefined : base.old, files.has(key));
    return { ...base, ...byKind(kind, encrypted), kind };
  });
}

/** The class a key's kind gives it: only the cluster's own credentials are generated. */
function byKind(kind: KeyKind, encrypted: boolean): Pick<KeyState, 'class' | 'recognisedBy'> {
  switch (kind) {
    case 'owned':
    case 'user':
      return { class: 'generated' };
    case 'file':
      return { class: 'supplied', recognisedBy: 'file' };
    case 'third-party':
      return { class: 'supplied', recognisedBy: 'name' };
    case 'address':
    case 'plain':
      // Unreadable, the new cluster's host or setting can only be given; readable, it is kept (and moved by the domain rewrite).
      return encrypted ? { class: 'supplied', recognisedBy: 'name' } : { class: 'configuration' };
    default:
      return { class: 'supplied', recognisedBy: encrypted ? 'name' : 'value' };
  }
}

/**
 * A supplied key the reference did not declare (recognised by its name or its readable value): rebuilt
 * instead when it carries credentials of the plan (a webhook URL with the supplied token in it).
 */
const byShape = (k: KeyState) =>
  k.class === 'supplied' && (k.recognisedBy === 'name' || k.recognisedBy === 'file' || k.recognisedBy === 'value');

/** A key named like a connection string of the cluster's own database, queue or cache: built from the cluster's credentials. */
const builtFromOthers = (leaf: string) =>
  COMPOSITE_KEY.test(leaf) &&
  /_(database|db|postgres\w*|pg|mysql|mariadb|redis|valkey|mongo\w*|amqp|rabbit\w*|broker|cache|nats)_/.test(
    nameWords(leaf),
  );

/** A missing supplied key as the refusal names it: a source's Secret with the sources that read it. */
function describeMissing(k: KeyState): string {
  const id = `${k.secret}/${k.key}`;
  const why = k.usedBy
    ? ` (Secret ${k.secret} is read by ${k.usedBy.join(' and ')})`
    : k.recognisedBy === 'file'
      ? ' (a whole file)'
      : '';
  return `${id}${why}`;
}

/** One refusal for every value the plan cannot decide: supplied values missing and encrypted values that need a template. */
function refusal(lacking: KeyState[], untemplated: string[]): string {
  const parts: string[] = [];
  if (lacking.length > 0)
    parts.push(
      `${lacking.length} value(s) the generator must not invent are missing (credentials only their issuer can create, files, hosts and settings the reference keeps encrypted; give them with --credentials FILE as {"<namespace>/<secret>/<key>": "<value>"}): ${lacking.map(describeMissing).join(', ')}`,
    );
  if (untemplated.length > 0)
    parts.push(`${untemplated.length} encrypted value(s) need a template: ${untemplated.join('; ')}`);
  return parts.join('. ');
}

function templateHint(s: ReferenceSecret, name: string, key: string, why: string): string {
  return `${s.file}: Secret ${name} key ${key} ${why}: declare its value with the annotation ${TEMPLATE_ANNOTATION_PREFIX}${key} (e.g. "postgres://{{${s.namespace}/${name}/username}}:{{${s.namespace}/${name}/password}}@host:5432/db", or a literal)`;
}

/** The keys ("<namespace>/<secret>/<key>") a template names. */
const templateRefs = (template: string): string[] =>
  [...template.matchAll(TEMPLATE_REF)].map(([, ns, name, key]) => keyId(ns, name, key));

/**
 * A declared template with its references replaced by the new values of those keys; inside a URL's
 * user information and query the values are percent-encoded.
 */
function renderTemplate(k: KeyState, byId: Map<string, KeyState>): { value: string; from: string[] } {
  const from = new Set<string>();
  const valueOf = (ns: string, name: string, key: string) => {
    const ref = byId.get(keyId(ns, name, key));
    if (!ref)
      throw new GeneratorInputError(
        `${k.secret} key ${k.key}: its template names {{${ns}/${name}/${key}}}, which is no key of a Secret of this environment`,
      );
    if (ref.class === 'derived' || ref.class === 'registry')
      throw new GeneratorInputError(
        `${k.secret} key ${k.key}: its template names {{${ns}/${name}/${key}}}, which is itself built from others; name the keys it is built from`,
      );
    if (ref.fresh === undefined && ref.class !== 'configuration')
      throw new GeneratorInputError(`${k.secret} key ${k.key}: {{${ns}/${name}/${key}}} has no value`);
    from.add(secretId(ns, name));
    return (ref.fresh ?? Buffer.from(ref.old)).toString('utf8');
  };
  const fill = (text: string, encode: boolean) =>
    text.replace(TEMPLATE_REF, (_m, ns: string, name: string, key: string) =>
      encode ? encodeURIComponent(valueOf(ns, name, key)) : valueOf(ns, name, key),
    );
  const template = k.template!;
  const url = TEMPLATE_URL.exec(template);
  let value: string;
  if (url) {
    const [, scheme, userinfo, rest] = url;
    const q = rest.indexOf('?');
    value = `${scheme}${fill(userinfo, true)}@${q < 0 ? fill(rest, false) : fill(rest.slice(0, q), false) + fill(rest.slice(q), true)}`;
  } else value = fill(template, false);
  return { value, from: [...from].sort() };
}

/** The credentials (of any Secret) a structured value carries, in any of their text forms or inside base64 text. */
function carriedBy(k: KeyState, candidates: KeyState[]): KeyState[] {
  const decoded = base64Text(k.old);
  const haystacks = [k.old, ...(decoded ? [decoded] : [])].filter((h) => STRUCTURED.test(h));
  if (haystacks.length === 0) return [];
  return candidates.filter(
    (c) =>
      c !== k &&
      c.old.length >= MIN_EMBEDDED &&
      c.old !== k.old &&
      haystacks.some((h) => forms(c.old, c.old).some(([form]) => h.includes(form))),
  );
}

/** The new values by old value: passwords and tokens are replaced wherever they appear; usernames only where a user goes. */
interface Replacements {
  secrets: Array<[string, string]>;
  users: Map<string, string>;
}

/**
 * Fresh values of generated and supplied keys. Keys with the same reference value get the same new
 * value (two Secrets holding one password must keep agreeing). Secret replacements come longest
 * first, so that a password containing another is replaced whole.
 */
function freshValues(keys: KeyState[], supplied: SuppliedCredentials): Replacements {
  const byOld = new Map<string, string>();
  const users = new Map<string, string>();
  for (const k of keys) {
    if (k.class === 'supplied') {
      const value = supplied[`${k.secret}/${k.key}`];
      if (value === undefined) continue;
      k.fresh = Buffer.from(value);
      if (k.old.length > 0) byOld.set(k.old, value);
    }
  }
  for (const k of keys.filter((k) => k.class === 'generated')) {
    const user = USER_KEY.test(leafName(k.key));
    const reused = k.old.length > 0 ? (user ? users.get(k.old) : byOld.get(k.old)) : undefined;
    const fresh = reused ?? (user ? 'u' + randomString(15, LOWER) : randomString(PASSWORD_LENGTH));
    k.fresh = Buffer.from(fresh);
    if (k.old.length > 0) (user ? users : byOld).set(k.old, fresh);
  }
  const secrets = [...byOld.entries()]
    .flatMap(([old, fresh]) => forms(old, fresh))
    .sort((a, b) => b[0].length - a[0].length);
  return { secrets, users };
}

/** A user field in text: `user=`, `DB_USER=`, `"username": "`, `login:` (a username is often also a database name, so never replaced elsewhere). */
const USER_FIELD = /((?:^|[^A-Za-z0-9])(?:[A-Za-z_]*user(?:name)?|login|uid)["']?\s*[=:]\s*["']?)([^&;\s"',}]+)/gim;

function replaceUsers(text: string, users: Map<string, string>): string {
  return text.replace(USER_FIELD, (match, prefix: string, value: string) => {
    const fresh = users.get(value);
    return fresh === undefined ? match : `${prefix}${fresh}`;
  });
}

function replaceSecrets(text: string, r: Replacements): string {
  return replaceUsers(replaceAll(text, r.secrets), r.users);
}

const URL_WITH_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/@\s]*)@(.*)$/is;

/** A URL's user and password rebuilt from the new values, percent-encoded as a URL needs them; the rest as text. */
function rebuildUrl(text: string, r: Replacements): string | null {
  const m = URL_WITH_USERINFO.exec(text);
  if (!m) return null;
  const [, scheme, userinfo, rest] = m;
  const colon = userinfo.indexOf(':');
  let user: string;
  let password: string | undefined;
  try {
    user = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
    password = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1));
  } catch {
    return null;
  }
  const raw = r.secrets.filter(([from]) => !from.includes('%'));
  const newUser = r.users.get(user) ?? replaceAll(user, raw);
  const rebuilt =
    password === undefined
      ? encodeURIComponent(newUser)
      : `${encodeURIComponent(newUser)}:${encodeURIComponent(replaceAll(password, raw))}`;
  return `${scheme}${rebuilt}@${replaceSecrets(rest, r)}`;
}

/** A "user:password" pair (the text of a Basic credential). */
function rebuildPair(text: string, r: Replacements): string | null {
  const m = /^([^:\s]+):(\S*)$/.exec(text);
  if (!m || !r.users.has(m[1])) return null;
  return `${r.users.get(m[1])}:${replaceAll(m[2], r.secrets)}`;
}

function rebuildText(text: string, r: Replacements): string {
  return rebuildUrl(text, r) ?? rebuildPair(text, r) ?? replaceSecrets(text, r);
}

/** A derived value with every old credential replaced by its new value: in URLs, in base64 text, in structured text. */
function rebuild(old: string, r: Replacements): string {
  const decoded = base64Text(old);
  if (decoded !== null) {
    const next = rebuildText(decoded, r);
    if (next !== decoded) return Buffer.from(next).toString('base64');
  }
  return rebuildText(old, r);
}
