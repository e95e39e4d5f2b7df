/**
 * The leftover scan: where the new cluster's files still name the reference cluster (its name, environment,
 * domain and subdomains, hosts, region, ACME e-mail, repository, API endpoints). A pure function of the files and
 * the identifiers; the files are the tenant's, so the scan is bounded in files, bytes, strings and findings.
 */
import { readBodies } from './yaml-docs';

export type IdentifierKind =
  'cluster-name' | 'environment' | 'domain' | 'host' | 'region' | 'acme-email' | 'repository-url' | 'endpoint';

/** One identifier of the reference cluster, as the scan looks for it. */
export interface ReferenceIdentifier {
  kind: IdentifierKind;
  value: string;
}

/** One occurrence of a reference identifier in the new cluster's files, and the flag that moves it. */
export interface Leftover {
  file: string;
  /** `Kind namespace/name` of the document holding it ("" for a file that is not YAML). */
  object: string;
  /** Dotted path of the field (`spec.values.cluster.name`), or `line N` in a file that is not YAML. */
  field: string;
  /** The field's value, cut to 200 characters (the scanned files are the new cluster's configuration, no Secret). */
  value: string;
  identifier: IdentifierKind;
  /** What of the value is the reference's (the host under its domain, the e-mail, the word). */
  matched: string;
  /** The flag that moves it: --var KEY=..., --host-map, --path-map, --source-url or --replace OLD=NEW. */
  flag: string;
}

/** The new cluster's own values: a match that is (or lies under) one of these is not a leftover. */
export interface OwnValues {
  domain: string;
  clusterName: string;
  acmeEmail: string;
  region: string;
  /** Values given for the new cluster (--replace's NEW): never the reference's, wherever they stand. */
  given?: readonly string[];
  /** The cluster-vars ConfigMap's name (cluster-vars references): its values move by --var. */
  varsConfigMap?: string;
}

export interface LeftoverScan {
  leftovers: Leftover[];
  /** Findings past MAX_LEFTOVERS, files past MAX_SCANNED_FILES or over MAX_SCANNED_FILE_BYTES: counted, not listed. */
  notListed: number;
}

export const MAX_LEFTOVERS = 500;
export const MAX_SCANNED_FILES = 5000;
export const MAX_SCANNED_FILE_BYTES = 1024 * 1024;
/** Strings of one file: a generated CRD bundle holds hundreds of thousands; past this the file is counted, not scanned. */
const MAX_STRINGS_PER_FILE = 100_000;
const MAX_VALUE_CHARS = 200;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A matcher per identifier: literal alternatives only (no nested quantifiers), so each test is linear in the string. */
interface Matcher {
  id: ReferenceIdentifier;
  pattern: RegExp;
  /** The same pattern without the global flag: does the text hold it at all (no lastIndex kept between calls). */
  anywhere: RegExp;
  /** A match that is the new cluster's own (a host under the new domain that also lies under the reference's). */
  own: (matched: string) => boolean;
}

/** A word: not inside a longer name of letters and digits (`main` in `main-cluster`, not in `domain`). */
export const wordPattern = (value: string, flags = 'g') =>
  new RegExp(`(?<![A-Za-z0-9_])${escape(value)}(?![A-Za-z0-9_])`, flags);

function matcherFor(id: ReferenceIdentifier, own: OwnValues): Omit<Matcher, 'anywhere'> {
  const newDomain = own.domain.toLowerCase();
  const underNewDomain = (host: string) => {
    const h = host.toLowerCase();
    return h === newDomain || h.endsWith(`.${newDomain}`);
  };
  switch (id.kind) {
    case 'domain':
      // The domain and every name under it; a label before it is part of the match, so the new domain's own
      // hosts (acme.example.com when the reference's is example.com) can be told apart.
      return {
        id,
        pattern: new RegExp(
          `(?<![A-Za-z0-9-])(?:[A-Za-z0-9-]{1,63}\\.){0,10}${escape(id.value)}(?![A-Za-z0-9-])`,
          'gi',
        ),
        own: underNewDomain,
      };
    case 'host':
    case 'acme-email':
      return {
        id,
        pattern: new RegExp(`(?<![A-Za-z0-9.-])${escape(id.value)}(?![A-Za-z0-9-])`, 'gi'),
        own: underNewDomain,
      };
    case 'repository-url': {
      // host/owner/name, in every spelling of it: https://host/..., ssh://git@host/..., git@host:owner/name.git
      const [host, ...rest] = id.value.split('/');
      const path = `${escape(host)}[/:]${escape(rest.join('/'))}`;
      return {
        id,
        pattern: new RegExp(`(?<![A-Za-z0-9-])${path}(?:\\.git)?(?![A-Za-z0-9_.-])`, 'gi'),
        own: () => false,
      };
    }
    default:
      return { id, pattern: wordPattern(id.value), own: () => false };
  }
}

/** Identifiers worth looking for: not empty, not the new cluster's own value, each once. */
function usefulIdentifiers(ids: readonly ReferenceIdentifier[], own: OwnValues): ReferenceIdentifier[] {
  const ownValues = new Set(
    [own.domain, own.clusterName, own.acmeEmail, own.region, ...(own.given ?? [])].map((v) => v.toLowerCase()),
  );
  const seen = new Set<string>();
  return ids.filter((id) => {
    const key = `${id.kind}\0${id.value.toLowerCase()}`;
    if (id.value.length < 2 || ownValues.has(id.value.toLowerCase()) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Fields whose words are not the cluster's: a Git branch is named `main` in most repositories, and the reference
 * cluster's name is often `main` too. The generator moves the branch by --source-branch, not as an identifier.
 */
const NOT_IDENTIFIER_FIELDS = [/(^|\.)ref\.branch$/, /^metadata\.annotations\./];

/** Whether a field's words can name the cluster (not a Git branch, not an annotation). */
export const namesCluster = (field: string) => !NOT_IDENTIFIER_FIELDS.some((p) => p.test(field));

/** A document's field path as the scan reports it: `spec.values.list[0].name`. */
export const dottedField = (path: ReadonlyArray<string | number>) =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

/** A Secret's values are never scanned, rewritten or shown. */
export const isSecretValue = (object: string, field: string) =>
  object.startsWith('Secret ') && /^(data|stringData)\./.test(field);

/** What a finding becomes in the new cluster, where the pass knows it (its name, e-mail, region, a host under its domain). */
function newValueFor(kind: IdentifierKind, matched: string, own: OwnValues, reference: string): string {
  if (kind === 'cluster-name' || kind === 'environment') return own.clusterName;
  if (kind === 'acme-email') return own.acmeEmail;
  if (kind === 'region') return own.region;
  if (kind === 'domain') return matched.slice(0, matched.length - reference.length) + own.domain;
  return 'NEW';
}

/** The flag that moves a finding: the object and field tell which. */
function flagFor(found: Omit<Leftover, 'flag'>, own: OwnValues, reference: string): string {
  const { identifier: kind, object, field, matched } = found;
  const to = newValueFor(kind, matched, own, reference);
  if (kind === 'repository-url' && /^(GitRepository|FluxInstance) /.test(object)) return '--source-url URL';
  if (kind === 'host') return `--host-map ${matched}=NEW`;
  if (/^Kustomization /.test(object) && field === 'spec.path') return `--path-map ${found.value}=NEW`;
  if (own.varsConfigMap && new RegExp(`^ConfigMap (.*/)?${escape(own.varsConfigMap)}$`).test(object))
    return `--var ${field.slice('data.'.length)}=${found.value.replace(matched, to)}`;
  return `--replace ${matched}=${to}`;
}

export function objectName(body: any): string {
  if (!body || typeof body !== 'object' || typeof body.kind !== 'string') return '';
  const ns = body.metadata?.namespace;
  return `${body.kind} ${ns ? `${ns}/` : ''}${body.metadata?.name ?? ''}`;
}

/** Every string of a document with its dotted field path, up to `budget` strings. */
function* stringsOf(value: unknown, path: string, budget: { left: number }): Generator<[string, string]> {
  if (budget.left <= 0) return;
  if (typeof value === 'string') {
    budget.left--;
    yield [path, value];
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* stringsOf(value[i], `${path}[${i}]`, budget);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) yield* stringsOf(v, path ? `${path}.${k}` : k, budget);
  }
}

/** The places of one file: YAML documents' string fields, or a text file's lines. */
function* placesOf(file: string, text: string): Generator<{ object: string; field: string; value: string }> {
  const budget = { left: MAX_STRINGS_PER_FILE };
  if (!/\.ya?ml$/.test(file)) {
    const lines = text.split('\n');
    for (let i = 0; i < lines.length && budget.left-- > 0; i++)
      yield { object: '', field: `line ${i + 1}`, value: lines[i] };
    return;
  }
  let bodies: readonly any[];
  try {
    bodies = readBodies(text, file);
  } catch {
    return; // not YAML the generator reads; validation reports what it builds
  }
  for (const body of bodies) {
    const object = objectName(body);
    for (const [field, value] of stringsOf(body, '', budget))
      if (!isSecretValue(object, field)) yield { object, field, value };
  }
}

/**
 * Every occurrence of the reference's identifiers in `files` (repository path -> bytes), with the flag that moves
 * it. Matches that are the new cluster's own (a host under its domain) are not listed.
 */
export function findLeftovers(
  files: Iterable<readonly [string, Buffer]>,
  identifiers: readonly ReferenceIdentifier[],
  own: OwnValues,
): LeftoverScan {
  const matchers = usefulIdentifiers(identifiers, own).map((id) => {
    const m = matcherFor(id, own);
    return { ...m, anywhere: new RegExp(m.pattern.source, m.pattern.flags.replace('g', '')) };
  });
  const scan: LeftoverScan = { leftovers: [], notListed: 0 };
  if (matchers.length === 0) return scan;
  let count = 0;
  for (const [file, bytes] of files) {
    if (++count > MAX_SCANNED_FILES || bytes.length > MAX_SCANNED_FILE_BYTES) {
      scan.notListed++;
      continue;
    }
    const text = bytes.toString('utf8');
    // Most files name no identifier at all (a gotk-components.yaml): a look at the text spares parsing them.
    if (!matchers.some((m) => m.anywhere.test(text))) continue;
    for (const place of placesOf(file, text))
      for (const { reference, ...found } of matchesIn(place.value, place.field, matchers))
        record(scan, { file, ...place, value: place.value.slice(0, MAX_VALUE_CHARS), ...found }, own, reference);
  }
  return scan;
}

function record(scan: LeftoverScan, leftover: Omit<Leftover, 'flag'>, own: OwnValues, reference: string) {
  if (scan.leftovers.length >= MAX_LEFTOVERS) {
    scan.notListed++;
    return;
  }
  scan.leftovers.push({
    ...leftover,
    flag: flagFor(leftover, own, reference),
  });
}

/** The longest a DNS name can be: how far around a word the scan looks for the host name it stands in. */
const MAX_HOST_CHARS = 253;
const HOST_CHAR = /[A-Za-z0-9.-]/;
const HOST_NAME = /^(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,63}$/;

/** The host name a match stands in (`acme-staging-v02.api.letsencrypt.org` around `staging`), or undefined. */
export function enclosingHost(value: string, index: number, length: number): string | undefined {
  let start = index;
  let end = index + length;
  // Bounded on each side, so a long run of host characters costs at most a DNS name's length per match.
  while (start > 0 && index - start < MAX_HOST_CHARS && HOST_CHAR.test(value[start - 1])) start--;
  while (end < value.length && end - index < MAX_HOST_CHARS && HOST_CHAR.test(value[end])) end++;
  const token = value.slice(start, end).replace(/^[.-]+|[.-]+$/g, '');
  return HOST_NAME.test(token) ? token : undefined;
}

/**
 * A cluster-name or environment word inside the host name of another party (Let's Encrypt's
 * `acme-staging-v02.api.letsencrypt.org` for a reference named staging) is that party's word, not the cluster's:
 * the new cluster cannot rename it, and --replace would break the address. Hosts under the reference's domains
 * stay findings (the domain matcher lists them too).
 */
function inThirdPartyHost(value: string, match: RegExpMatchArray, referenceDomains: readonly string[]): boolean {
  const host = enclosingHost(value, match.index!, match[0].length)?.toLowerCase();
  return host !== undefined && !referenceDomains.some((d) => host === d || host.endsWith(`.${d}`));
}

/** The identifiers a value names (one finding per identifier kind and matched text). */
function matchesIn(value: string, field: string, matchers: readonly Matcher[]) {
  const found: Array<{ identifier: IdentifierKind; matched: string; reference: string }> = [];
  const wordField = namesCluster(field);
  const referenceDomains = matchers.filter((m) => m.id.kind === 'domain').map((m) => m.id.value.toLowerCase());
  for (const m of matchers) {
    const word = m.id.kind === 'cluster-name' || m.id.kind === 'environment';
    if (word && !wordField) continue;
    for (const match of value.matchAll(m.pattern)) {
      const matched = match[0];
      if (m.own(matched) || found.some((f) => f.matched.toLowerCase() === matched.toLowerCase())) continue;
      if (word && inThirdPartyHost(value, match, referenceDomains)) continue;
      found.push({ identifier: m.id.kind, matched, reference: m.id.value });
    }
  }
  return found;
}

/** `file: Kind ns/name field names the reference's <kind> "<matched>" (<flag>)`: the CLI's flag, or a request's field. */
export const leftoverLine = (l: Leftover, flag = l.flag) =>
  `${l.file}: ${l.object ? `${l.object} ` : ''}${l.field} names the reference's ${l.identifier} ${JSON.stringify(l.matched)} (${flag})`;

/** The request fields of the flags flagFor names: a service request moves a leftover with these. */
const REQUEST_FIELDS: Record<string, string> = {
  var: 'cluster_vars',
  'host-map': 'host_map',
  'path-map': 'path_map',
  replace: 'replace',
};

/** A leftover's flag as a scaffold request says it: `--replace a=b` is `replace {"a":"b"}`, `--source-url` is `repo.flux_url`. */
export function requestFieldFor(flag: string): string {
  if (flag.startsWith('--source-url')) return 'repo.flux_url';
  const m = /^--(var|host-map|path-map|replace) ([^=]*)=(.*)$/s.exec(flag);
  return m ? `${REQUEST_FIELDS[m[1]]} ${JSON.stringify({ [m[2]]: m[3] })}` : flag;
}
