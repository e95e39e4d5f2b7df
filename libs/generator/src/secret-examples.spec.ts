import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CredentialPlan,
  SUPPLIED_ANNOTATION,
  TEMPLATE_ANNOTATION_PREFIX,
  type ReferenceSecret,
} from './credential-plan';
import { GeneratorInputError } from './errors';
import { secretExamples, withExampleAnnotations } from './secret-examples';

const encrypted = (
  namespace: string,
  name: string,
  keys: string[],
  annotations?: Record<string, string>,
): ReferenceSecret => ({
  namespace,
  file: `clusters/dev/secrets/${name}.yaml`,
  body: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    stringData: Object.fromEntries(keys.map((k) => [k, 'ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]'])),
    sops: { age: [] },
  },
});

function repoWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'gs-examples-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

describe('Secret shapes from *.yaml.example files', () => {
  const EXAMPLES = {
    'bootstrap/sops/secret-templates/dns.yaml.example': [
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: dns-token\n  namespace: cert-manager\n  annotations:',
      `    ${SUPPLIED_ANNOTATION}: api-token\n    team.example.org/owner: platform\nstringData:\n  api-token: <token>`,
    ].join('\n'),
    'bootstrap/sops/secret-templates/app.yml.example': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  annotations:\n    ${TEMPLATE_ANNOTATION_PREFIX}URL: "https://{{cert-manager/dns-token/api-token}}@dns.example.org/"\n    ${TEMPLATE_ANNOTATION_PREFIX}MODE: from-example\n`,
    '.git/ignored.yaml.example': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n',
    'docs/values.yaml.example': 'replicas: 2\n',
  };

  it('reads the Secrets of example files below the root, skipping hidden folders and other documents', () => {
    const found = secretExamples(repoWith(EXAMPLES));
    expect(found.map((s) => [s.file, s.namespace, s.body.metadata.name])).toEqual([
      ['bootstrap/sops/secret-templates/app.yml.example', '', 'app'],
      ['bootstrap/sops/secret-templates/dns.yaml.example', 'cert-manager', 'dns-token'],
    ]);
  });

  it('adds only scaffolder annotations, matched by namespace and name (any namespace when the example has none); the reference wins', () => {
    const examples = secretExamples(repoWith(EXAMPLES));
    const merged = withExampleAnnotations(
      [
        encrypted('cert-manager', 'dns-token', ['api-token']),
        encrypted('shop', 'app', ['URL', 'MODE'], { [`${TEMPLATE_ANNOTATION_PREFIX}MODE`]: 'from-reference' }),
        encrypted('other', 'dns-token', ['api-token']),
      ],
      examples,
    );
    expect(merged[0].body.metadata.annotations).toEqual({ [SUPPLIED_ANNOTATION]: 'api-token' });
    expect(merged[0].file).toBe(
      'clusters/dev/secrets/dns-token.yaml (annotations from bootstrap/sops/secret-templates/dns.yaml.example)',
    );
    expect(merged[1].body.metadata.annotations[`${TEMPLATE_ANNOTATION_PREFIX}MODE`]).toBe('from-reference');
    expect(merged[2].body.metadata.annotations).toBeUndefined();
    const plan = CredentialPlan.build(merged.slice(0, 2), {
      requireSupplied: true,
      supplied: { 'cert-manager/dns-token/api-token': 'tok/en' },
    });
    expect(plan.entries.map((e) => `${e.name}/${e.key}=${e.class}`)).toEqual([
      'dns-token/api-token=supplied',
      'app/MODE=derived',
      'app/URL=derived',
    ]);
    expect(plan.valuesFor('shop', 'app').URL.toString()).toBe('https://tok%2Fen@dns.example.org/');
  });

  it('refuses an example file that is not YAML, naming it; never follows a link', () => {
    expect(() => secretExamples(repoWith({ 'a/broken.yaml.example': 'a: [\n' }))).toThrow(GeneratorInputError);
    expect(() => secretExamples(repoWith({ 'a/broken.yaml.example': 'a: [\n' }))).toThrow(/a\/broken\.yaml\.example/);
    const outside = repoWith(EXAMPLES);
    const root = repoWith({});
    symlinkSync(join(outside, 'bootstrap'), join(root, 'linked'));
    expect(secretExamples(root)).toEqual([]);
  });
});
