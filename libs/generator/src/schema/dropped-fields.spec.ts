import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { GeneratorValidationError } from '../errors';
import { COVERED_TYPES } from './dropped-fields';
import { checkSchemas } from './index';
import { packageRoot, SCHEMA_PACKAGES } from './schema-index';

const refusal = (body: object) => {
  try {
    checkSchemas([{ body, file: 'x.yaml' }], 'x');
  } catch (e) {
    expect(e).toBeInstanceOf(GeneratorValidationError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

const crd = (schema: object, extra: object = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...extra }],
  },
});

/** Every `.d.ts` of the schema packages that declares a field the validators lost. */
function typesDeclaringDroppedFields(): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '_schemas' && entry.name !== 'node_modules') walk(path);
      } else if (
        entry.name.endsWith('.d.ts') &&
        /^\s*"(description|x-kubernetes-[a-z-]+)"\??:/m.test(readFileSync(path, 'utf8'))
      )
        found.add(basename(entry.name, '.d.ts'));
    }
  };
  for (const name of SCHEMA_PACKAGES) walk(packageRoot(name));
  return [...found].sort();
}

describe('fields the packaged schemas lost (description, x-kubernetes-*)', () => {
  it('covers every type of the packages that declares one', () => {
    expect(typesDeclaringDroppedFields()).toEqual([...COVERED_TYPES].sort());
  });

  it('passes a CRD using every structural extension, descriptions at every level and on printer columns', () => {
    const schema = {
      description: 'A widget.',
      type: 'object',
      properties: {
        spec: {
          description: 'What the widget is.',
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.size > 0', message: 'size must be positive' }],
          properties: {
            size: { type: 'integer', format: 'int32', default: 1, description: 'How big.' },
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            values: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            template: {
              type: 'object',
              'x-kubernetes-embedded-resource': true,
              'x-kubernetes-preserve-unknown-fields': true,
            },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { name: { type: 'string' } } },
            },
            data: { type: 'string', format: 'byte', nullable: true },
          },
        },
      },
    };
    const columns = {
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'How big.' }],
    };
    expect(checkSchemas([{ body: crd(schema, columns) }], 'x').checked).toBe(1);
  });

  it('still names misspelt fields and wrong types of the extensions', () => {
    const message = refusal(
      crd({
        type: 'object',
        descripton: 'typo',
        properties: {
          spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': 'yes', 'x-kubernetes-list-type': 'bag' },
        },
      }),
    );
    expect(message).toContain('spec.versions[0].schema.openAPIV3Schema.descripton unknown field');
    expect(message).toContain('openAPIV3Schema.properties.spec.x-kubernetes-preserve-unknown-fields must be boolean');
    expect(message).toContain('openAPIV3Schema.properties.spec.x-kubernetes-list-type must be one of atomic, set, map');
  });

  it('passes the description of a PriorityClass, a GatewayClass and an Alertmanager receiver', () => {
    const check = checkSchemas(
      [
        {
          apiVersion: 'scheduling.k8s.io/v1',
          kind: 'PriorityClass',
          metadata: { name: 'high' },
          value: 1000,
          description: 'For critical pods.',
        },
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'GatewayClass',
          metadata: { name: 'cilium' },
          spec: { controllerName: 'io.cilium/gateway-controller', description: 'Cilium Gateway' },
        },
        {
          apiVersion: 'monitoring.coreos.com/v1alpha1',
          kind: 'AlertmanagerConfig',
          metadata: { name: 'team' },
          spec: {
            receivers: [{ name: 'ops', opsgenieConfigs: [{ description: 'Paged by {{ .GroupLabels.alertname }}' }] }],
          },
        },
      ].map((body) => ({ body })),
      'x',
    );
    expect(check.checked).toBe(3);
  });
});
