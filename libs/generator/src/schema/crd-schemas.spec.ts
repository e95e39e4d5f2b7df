import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GeneratorValidationError } from '../errors';
import { crdSchemas, crdValidator } from './crd-schemas';
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES } from './crd-shape';
import { checkSchemas } from './index';
import { CompiledValidator, kindKey } from './schema-index';

/** Real CRDs and examples of six projects at pinned commits (each folder's SOURCE and LICENSE). */
const CRDS = join(__dirname, '../../../../test/fixtures/public/crds');
const PROJECTS = readdirSync(CRDS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

interface Doc {
  body: any;
  file: string;
}

const docsOf = (project: string): Doc[] =>
  readdirSync(join(CRDS, project))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(CRDS, project, f), 'utf8'))
        .map((d) => d.toJS())
        .filter(Boolean)
        .map((body) => ({ body, file: `${project}/${f}` })),
    );
const isCrd = (d: Doc) => d.body.kind === 'CustomResourceDefinition';
const allDocs = PROJECTS.flatMap(docsOf);
const allCrds = allDocs.filter(isCrd);
const examples = allDocs.filter((d) => !isCrd(d) && d.body.kind !== 'Secret');

const refusal = (objects: Doc[]) => {
  try {
    checkSchemas(objects, 'crds');
  } catch (e) {
    expect(e).toBeInstanceOf(GeneratorValidationError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

/** The example named `name`, changed by `edit`. */
function example(name: string, edit: (body: any) => void = () => {}): Doc {
  const found = examples.find((d) => d.body.metadata.name === name);
  if (!found) throw new Error(`no example ${name}`);
  const body = structuredClone(found.body);
  edit(body);
  return { body, file: found.file };
}

const compiled = (apiVersion: string, kind: string) => {
  const v = crdValidator(crdSchemas(allCrds), apiVersion, kind);
  if (typeof v !== 'function') throw new Error(`${apiVersion} ${kind}: ${v?.message ?? 'no CRD'}`);
  return v as CompiledValidator;
};

describe('CRDs of real projects: the CRD objects and the objects of their kinds', () => {
  it('vendors at least a dozen CRDs, each project with its licence and pinned source', () => {
    expect(allCrds.length).toBeGreaterThanOrEqual(14);
    for (const project of PROJECTS) {
      expect(readFileSync(join(CRDS, project, 'LICENSE'), 'utf8')).toMatch(/Apache License/);
      expect(readFileSync(join(CRDS, project, 'SOURCE'), 'utf8')).toMatch(/^commit: [0-9a-f]{40}$/m);
    }
  });

  it.each(PROJECTS)(
    '%s: the CRDs pass the schema check (description, x-kubernetes-* are declared fields) and compile',
    (project) => {
      const crds = docsOf(project).filter(isCrd);
      expect(checkSchemas(crds, project)).toEqual({ checked: crds.length, withoutSchema: [], warnings: [] });
      for (const { body } of crds)
        for (const version of body.spec.versions)
          expect(typeof compiled(`${body.spec.group}/${version.name}`, body.spec.names.kind)).toBe('function');
    },
  );

  it("checks the projects' own examples against the CRDs the same build applies, where no package has the kind", () => {
    const check = checkSchemas([...allCrds, ...examples], 'crds');
    expect(check.withoutSchema).toEqual([]);
    expect(check.checked).toBe(allCrds.length + examples.length);
  });

  const withVendoredCrd = examples.filter((d) => crdSchemas(allCrds).has(kindKey(d.body.apiVersion, d.body.kind)));
  it.each(withVendoredCrd.map((d) => [`${d.body.kind} ${d.body.metadata.name}`, d] as const))(
    'the compiled CRD accepts the example %s',
    (_name, { body }) => {
      const validate = compiled(body.apiVersion, body.kind);
      expect(validate(body) ? [] : validate.errors).toEqual([]);
    },
  );

  it('refuses a wrong type on a typed field, naming the file, the object and the field', () => {
    const message = refusal([
      ...allCrds,
      example('cluster-example-full', (b) => (b.spec.instances = 'three')),
      example('backup-example', (b) => (b.spec.backupOwnerReference = 'nobody')),
      example('hello-world', (b) => (b.spec.target.deletionPolicy = true)),
      example('my-password', (b) => (b.spec.length = '42')),
      example('example-com-tls', (b) => (b.spec.routes[0].services[0].port = true)),
    ]);
    for (const problem of [
      'cloudnative-pg/cluster-example-full.yaml: Cluster cluster-example-full: spec.instances must be integer (not string)',
      'cloudnative-pg/scheduled-backup-example.yaml: ScheduledBackup backup-example: spec.backupOwnerReference must be one of none, self, cluster (not "nobody")',
      'external-secrets/full-external-secret.yaml: ExternalSecret hello-world: spec.target.deletionPolicy must be string (not boolean)',
      'external-secrets/generator-password.yaml: Password my-password: spec.length must be integer (not string)',
      'traefik/examples.yaml: IngressRoute example-com-tls: spec.routes[0].services[0].port must be integer or string (not boolean)',
    ])
      expect(message).toContain(problem);
  });

  it('reads structural schemas as the API server: int-or-string, preserve-unknown-fields, nullable, defaults; unknown fields named', () => {
    const accepted = checkSchemas(
      [
        ...allCrds,
        example('example-com-tls', (b) => (b.spec.routes[0].services[0].port = 'http')),
        example('noop', (b) => b.spec.plugin && (b.spec.plugin.noop.any = { free: ['form'] })),
        example('cluster-example-full', (b) => (b.spec.description = null)),
      ],
      'crds',
    );
    expect(accepted.withoutSchema).toEqual([]);
    const message = refusal([...allCrds, example('cluster-example-full', (b) => (b.spec.storage.sise = '1Gi'))]);
    expect(message).toContain('Cluster cluster-example-full: spec.storage.sise unknown field');
  });
});

describe("a CRD is a tenant's input: its reading is bounded", () => {
  const crd = (schema: object) => ({
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'hostiles.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Hostile', plural: 'hostiles' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    },
    file: 'crds/hostile.yaml',
  });
  const object = (spec: unknown) => ({
    body: { apiVersion: 'example.com/v1', kind: 'Hostile', metadata: { name: 'h' }, spec },
    file: 'apps/h.yaml',
  });

  it('refuses a schema nested deeper than the bound, or with more nodes, before walking it', () => {
    let deep: any = { type: 'string' };
    for (let i = 0; i < MAX_SCHEMA_DEPTH + 5; i++) deep = { type: 'object', properties: { a: deep } };
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: MAX_SCHEMA_NODES + 1 }, (_, i) => [`f${i}`, { type: 'string' }]),
      ),
    };
    // The reading stops at the bound: it costs what the bound allows, not what the tenant wrote.
    for (const schema of [deep, wide]) {
      const started = performance.now();
      expect(crdValidator(crdSchemas([crd(schema)]), 'example.com/v1', 'Hostile')).toBeInstanceOf(Error);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(refusal([crd(deep), object({})])).toContain(
      `apps/h.yaml: Hostile h cannot be checked: crds/hostile.yaml: CustomResourceDefinition hostiles.example.com: openAPIV3Schema${'.properties.a'.repeat(MAX_SCHEMA_DEPTH + 1)} is nested deeper than ${MAX_SCHEMA_DEPTH} schemas`,
    );
    expect(refusal([crd(wide), object({})])).toContain(`the schema has more than ${MAX_SCHEMA_NODES} nodes`);
  });

  it('runs patterns in linear time (RE2): a catastrophic pattern on a long value stays fast', () => {
    const schema = { type: 'object', properties: { spec: { type: 'string', pattern: '^(a+)+$' } } };
    const started = performance.now();
    expect(refusal([crd(schema), object(`${'a'.repeat(100_000)}!`)])).toContain('spec must match ^(a+)+$');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('compiles and checks the largest vendored CRD in bounded time', () => {
    const clusters = allCrds.filter((d) => d.body.metadata.name === 'clusters.postgresql.cnpg.io');
    const started = performance.now();
    checkSchemas([...clusters, example('cluster-example-full')], 'crds');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
