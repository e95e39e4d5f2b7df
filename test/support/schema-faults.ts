/**
 * The broken objects kustomize accepts and the cluster refuses (issue #26), planted into a copy of a
 * reference: four on the Flux Kustomization of the reference's first pass, two as new objects in a
 * folder that pass builds. Each names the file, object and field the scaffolder must report.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parseDocument, stringify } from 'yaml';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { tempDir } from './files';
import { EXAMPLE_HOSTS, writeFluxExampleReference } from './flux-example-repo';

export interface FaultyReference {
  name: string;
  /** Writes a fresh copy of the reference and returns its folder. */
  write(): string;
  referenceEnv: string;
  /** Repository file holding the infra pass's Flux Kustomization, and that Kustomization's name. */
  kustomizationFile: string;
  kustomization: string;
  /** A folder (with kustomization.yaml) the infra pass builds, where new objects go. */
  builtFolder: string;
  /** Extra command-line arguments the reference needs (the Flux example's host map and domain). */
  args?: string[];
  /** What a service request for this reference adds (the Flux example's host map and domain). */
  requestFields?: Record<string, unknown> & { repo?: Record<string, string> };
  /** Where the built folder's objects land in the new cluster's tree. */
  newFolder?(cluster: string): string;
  /** Where the new cluster's copy of the Kustomization file lands (the message names the new tree's file). */
  newFile(cluster: string): string;
}

const shipped = (template: string) => () => {
  const dir = tempDir(`faulty-${template}`);
  cpSync(join(SHIPPED_TEMPLATE, '..', template), dir, { recursive: true });
  return dir;
};

/** A credentials file (its owner's only, as the command line demands) with the sops platform's DNS token. */
function dnsTokenCredentials(): string {
  const file = join(tempDir('faulty-sops-credentials'), 'credentials.yaml');
  writeFileSync(file, 'cert-manager/cloudflare-api-token/api-token: faulty-dns-token-0123456789\n', { mode: 0o600 });
  return file;
}

export const FAULTY_REFERENCES: FaultyReference[] = [
  {
    name: 'platform (overlays)',
    write: shipped('platform'),
    referenceEnv: 'development',
    kustomizationFile: 'clusters/development/flux-system/gotk-sync.yaml',
    kustomization: 'infrastructure',
    builtFolder: 'clusters/development/infrastructure',
    newFolder: (c) => `clusters/${c}/infrastructure`,
    newFile: (c) => `clusters/${c}/flux-system/gotk-sync.yaml`,
  },
  {
    name: 'phased-platform (cluster-vars)',
    write: shipped('phased-platform'),
    referenceEnv: 'dev',
    kustomizationFile: 'platform/cert-manager/ks.yaml',
    kustomization: 'cert-manager',
    builtFolder: 'platform/cert-manager/app',
    newFile: () => 'platform/cert-manager/ks.yaml',
  },
  {
    name: 'sops-platform (cluster-vars, SOPS)',
    write: shipped('sops-platform'),
    referenceEnv: 'dev',
    kustomizationFile: 'clusters/base/platform.yaml',
    kustomization: 'platform',
    builtFolder: 'platform',
    // The infra pass rehearses the full pass, which needs the token only its issuer can create.
    args: ['--credentials', dnsTokenCredentials()],
    newFile: () => 'clusters/base/platform.yaml',
  },
  {
    name: "Flux's example layout",
    write: () => {
      const dir = tempDir('faulty-flux-example');
      writeFluxExampleReference(dir);
      return dir;
    },
    referenceEnv: 'staging',
    kustomizationFile: 'clusters/staging/infrastructure.yaml',
    kustomization: 'infra-controllers',
    builtFolder: 'infrastructure/controllers',
    // The domain too: a fault may hide the Kustomization that tells external-dns's domain.
    args: ['--host-map', `${EXAMPLE_HOSTS.podinfo}=podinfo.acme.io`, '--reference-domain', 'staging.example.net'],
    // Flux's GitRepository takes http, https and ssh URLs only: the test's file:// remote is not one Flux could fetch.
    requestFields: {
      host_map: { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.example.com' },
      reference_domain: 'staging.example.net',
      repo: { flux_url: 'https://git.example.com/fleet.git' },
    },
    newFile: (c) => `clusters/${c}/infrastructure.yaml`,
  },
];

export interface SchemaFault {
  name: string;
  plant(reference: string, ref: FaultyReference): void;
  /** What the error must say after the file and object: the field and the rule. */
  field: RegExp;
  /** The object the error names. */
  object: (ref: FaultyReference) => string;
  /** The file the error names, in the new cluster's tree or the reference's shared folders. */
  file: (ref: FaultyReference, cluster: string) => string;
  /**
   * Refused before the schema check, as a reference input (exit 2): a SealedSecret in a reference is
   * sealed for the reference's cluster and never copied, so the generator refuses the file first.
   */
  refusedAsInput?: boolean;
}

function editKustomization(reference: string, ref: FaultyReference, edit: (spec: any) => void) {
  const file = join(reference, ref.kustomizationFile);
  const docs = parseAllDocuments(readFileSync(file, 'utf8')) as any[];
  const target = docs.find(
    (d) => d.get('kind') === 'Kustomization' && d.getIn(['metadata', 'name']) === ref.kustomization,
  );
  if (!target) throw new Error(`${ref.kustomizationFile} has no Kustomization ${ref.kustomization}`);
  const body = target.toJS();
  edit(body.spec);
  docs[docs.indexOf(target)] = parseDocument(stringify(body));
  writeFileSync(file, docs.map((d) => d.toString()).join('---\n'));
}

function addObject(reference: string, ref: FaultyReference, body: object) {
  const folder = join(reference, ref.builtFolder);
  writeFileSync(join(folder, 'schema-fault.yaml'), stringify(body));
  const kustomization = parseDocument(readFileSync(join(folder, 'kustomization.yaml'), 'utf8'));
  kustomization.addIn(['resources'], 'schema-fault.yaml');
  writeFileSync(join(folder, 'kustomization.yaml'), kustomization.toString());
}

const onKustomization = (name: string, edit: (spec: any) => void, field: RegExp): SchemaFault => ({
  name,
  plant: (reference, ref) => editKustomization(reference, ref, edit),
  field,
  object: (ref) => `Kustomization flux-system/${ref.kustomization}`,
  file: (ref, cluster) => ref.newFile(cluster),
});

const newObject = (name: string, body: any, field: RegExp, refusedAsInput = false): SchemaFault => ({
  name,
  refusedAsInput,
  plant: (reference, ref) => addObject(reference, ref, body),
  field,
  object: () => `${body.kind} ${body.metadata.namespace}/${body.metadata.name}`,
  file: (ref, cluster) => `${ref.newFolder?.(cluster) ?? ref.builtFolder}/schema-fault.yaml`,
});

export const SCHEMA_FAULTS: SchemaFault[] = [
  onKustomization(
    'a wrong sourceRef.kind',
    (spec) => (spec.sourceRef.kind = 'HelmRepository'),
    /spec\.sourceRef\.kind must be one of OCIRepository, GitRepository, Bucket, ExternalArtifact \(not "HelmRepository"\)/,
  ),
  onKustomization(
    'dependOn: for dependsOn',
    (spec) => (spec.dependOn = [{ name: 'namespaces' }]),
    /spec\.dependOn unknown field/,
  ),
  onKustomization(
    'secretref: for secretRef',
    (spec) => (spec.kubeConfig = { secretref: { name: 'remote-kubeconfig' } }),
    /spec\.kubeConfig\.secretref unknown field/,
  ),
  onKustomization(
    'interval: 50 minutes',
    (spec) => (spec.interval = '50 minutes'),
    /spec\.interval must be a Go duration/,
  ),
  newObject(
    'a number in encryptedData',
    {
      apiVersion: 'bitnami.com/v1alpha1',
      kind: 'SealedSecret',
      metadata: { name: 'fault', namespace: 'default' },
      spec: { encryptedData: { token: 12345 }, template: { metadata: { name: 'fault', namespace: 'default' } } },
    },
    /spec\.encryptedData\.token must be string \(not integer\)/,
    true,
  ),
  newObject(
    'a bad Ingress pathType',
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'fault', namespace: 'default' },
      spec: {
        rules: [
          {
            http: {
              paths: [{ path: '/', pathType: 'prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
            },
          },
        ],
      },
    },
    /spec\.rules\[0\]\.http\.paths\[0\]\.pathType must be one of Exact, ImplementationSpecific, Prefix \(not "prefix"\)/,
  ),
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The exit code and message a fault must produce: its file, its object and (from the schema check) its field. */
export function faultRefusal(
  fault: SchemaFault,
  ref: FaultyReference,
  cluster: string,
): { code: number; message: RegExp } {
  const file = escape(fault.file(ref, cluster));
  // The reference's own file: it is refused where it is, before anything of the new cluster exists.
  if (fault.refusedAsInput)
    return {
      code: 2,
      message: new RegExp(
        `${escape(`${ref.builtFolder}/schema-fault.yaml`)} holds ${fault.object(ref).split(' ')[0]} fault, sealed for the reference cluster`,
      ),
    };
  return { code: 1, message: new RegExp(`${file}: ${escape(fault.object(ref))}: ${fault.field.source}`) };
}
