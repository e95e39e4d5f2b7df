import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { GeneratorInputError } from './errors';
import { isRemoteReference, refuseRemoteResources } from './remote-resources';

const segment = fc.stringMatching(/^[a-z0-9_][a-z0-9_-]{0,15}$/);
/** A local path as references write them: ./, ../ or nothing, folders, and maybe a manifest file. */
const localPath = fc
  .tuple(
    fc.constantFrom('', './', '../', '../../'),
    fc.array(segment, { minLength: 1, maxLength: 5 }),
    fc.constantFrom('', '.yaml', '.yml', '/kustomization.yaml', '.json'),
  )
  .map(([prefix, parts, end]) => `${prefix}${parts.join('/')}${end}`);
const host = fc.constantFrom(
  '127.0.0.1:8080',
  'github.com',
  'gitlab.example.org',
  'git.internal.example.com:2222',
  '10.0.0.1',
  'localhost:9',
);

/** Every form kustomize (or go-getter under it) fetches. */
const remote = fc.oneof(
  fc
    .tuple(fc.constantFrom('http', 'https', 'ssh', 'git', 'file', 'HTTPS', 'git+ssh'), host, localPath)
    .map(([s, h, p]) => `${s}://${h}/${p}`),
  fc.tuple(host, localPath).map(([h, p]) => `git::https://${h}/${p}`),
  fc
    .tuple(fc.constantFrom('github.com', 'gitlab.com', 'bitbucket.org', 'dev.azure.com'), localPath)
    .map(([h, p]) => `${h}/${p}`),
  fc.tuple(host, localPath).map(([h, p]) => `git@${h.split(':')[0]}:${p}`),
  fc.tuple(localPath, fc.constantFrom('ref', 'version', 'timeout', 'submodules')).map(([p, q]) => `${p}?${q}=v1`),
  localPath.map((p) => `gh:${p}`),
  fc.tuple(fc.constantFrom('127.0.0.1', '192.168.1.10'), localPath).map(([a, p]) => `${a}:8080/${p}`),
);

describe('remote resources in kustomizations: refused before any build', () => {
  it('accepts local paths', () => {
    fc.assert(fc.property(localPath, (p) => !isRemoteReference(p)));
    for (const p of [
      'base',
      '../base',
      'deployment.yaml',
      './apps/podinfo',
      'Kustomization',
      'config.d/x.yaml',
      '/abs/path',
    ])
      expect(isRemoteReference(p)).toBe(false);
  });

  it('refuses every URL form kustomize would fetch, with spaces around too', () => {
    fc.assert(fc.property(remote, fc.constantFrom('', ' ', '\t'), (r, pad) => isRemoteReference(`${pad}${r}${pad}`)));
    for (const r of [
      'http://127.0.0.1:9/x.yaml',
      'git::https://example.com/x',
      'github.com/org/repo//deploy?ref=v1',
      'ssh://git@127.0.0.1:6379/x',
      'git@github.com:org/repo',
    ]) {
      expect(isRemoteReference(r)).toBe(true);
    }
  });

  // The bounds catch backtracking (exponential on short inputs, quadratic on 100,000 characters: seconds), not speed:
  // they leave room for a loaded machine, where a linear check of these inputs once took 249 ms.
  it('answers in bounded time on any input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 4000 }), (s) => {
        const started = performance.now();
        isRemoteReference(s);
        return performance.now() - started < 500;
      }),
    );
    const started = performance.now();
    isRemoteReference(`${'a.'.repeat(50_000)}!`);
    isRemoteReference(`${'a@'.repeat(50_000)}`);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  describe('the walk from the build folder', () => {
    const tree = (files: Record<string, string>) => {
      const root = mkdtempSync(join(tmpdir(), 'remote-resources-'));
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(join(root, rel, '..'), { recursive: true });
        writeFileSync(join(root, rel), text);
      }
      return root;
    };
    const refusal = (root: string, dir: string) => {
      try {
        refuseRemoteResources(join(root, dir), (f) => relative(root, f), [root]);
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(GeneratorInputError);
        return (e as Error).message;
      }
    };

    it('names the file of a remote entry reached through local bases and components', () => {
      const root = tree({
        'clusters/c/kustomization.yaml':
          'resources:\n  - ../../apps/base\n  - ns.yaml\ncomponents:\n  - ../../components/x\n',
        'clusters/c/ns.yaml': 'kind: Namespace\n',
        'apps/base/kustomization.yaml': 'resources:\n  - deploy.yaml\n',
        'components/x/kustomization.yaml': 'kind: Component\nresources:\n  - https://127.0.0.1:1/evil.yaml\n',
      });
      expect(refusal(root, 'clusters/c')).toBe(
        'components/x/kustomization.yaml: resources entry "https://127.0.0.1:1/evil.yaml" is a remote resource, which kustomize would fetch; only paths in the repository are built',
      );
    });

    it('checks every field kustomize loads from', () => {
      const cases: Record<string, string> = {
        patches: 'patches:\n  - path: http://127.0.0.1:1/p.yaml\n',
        patchesStrategicMerge: 'patchesStrategicMerge:\n  - git::https://example.com/x\n',
        configMapGenerator: 'configMapGenerator:\n  - name: x\n    files:\n      - key=http://127.0.0.1:1/f\n',
        openapi: 'openapi:\n  path: https://example.com/schema.json\n',
        helmCharts: 'helmCharts:\n  - name: x\n    repo: https://charts.example.com\n',
        bases: 'bases:\n  - ssh://git@127.0.0.1:6379/x\n',
      };
      for (const text of Object.values(cases))
        expect(refusal(tree({ 'k/kustomization.yaml': text }), 'k')).toMatch(
          /^k\/kustomization\.yaml: .* is a remote resource/,
        );
      expect(refusal(tree({ 'k/Kustomization': 'resources: [http://127.0.0.1:1/x]' }), 'k')).toMatch(
        /^k\/Kustomization:/,
      );
    });

    it("checks a field however its name is spelt: kustomize's decoder (Go's encoding/json) ignores case and folds ſ to s", () => {
      const cases = [
        'Resources:\n  - http://127.0.0.1:1/x.yaml\n',
        'RESOURCES:\n  - http://127.0.0.1:1/x.yaml\n',
        're\u017fources:\n  - http://127.0.0.1:1/x.yaml\n',
        'resources: [a.yaml]\nResources:\n  - http://127.0.0.1:1/x.yaml\n',
        'Patches:\n  - Path: http://127.0.0.1:1/p.yaml\n',
        'ConfigMapGenerator:\n  - name: x\n    FILES:\n      - key=http://127.0.0.1:1/f\n',
        'OpenAPI:\n  Path: https://example.com/schema.json\n',
      ];
      for (const text of cases)
        expect(refusal(tree({ 'k/kustomization.yaml': text }), 'k')).toMatch(
          /^k\/kustomization\.yaml: .* is a remote resource/,
        );
    });

    it('refuses a local entry that really lies outside the roots: ../ out of them, or a symbolic link', () => {
      const outside = tree({ 'x/kustomization.yaml': 'resources: [cm.yaml]\n', 'x/cm.yaml': 'kind: ConfigMap\n' });
      const root = tree({ 'repo/k/kustomization.yaml': `resources:\n  - ../../../${relative(tmpdir(), outside)}/x\n` });
      expect(refusal(join(root, 'repo'), 'k')).toMatch(
        /^k\/kustomization\.yaml: resources entry ".*" leads outside the repository/,
      );
      const linked = tree({ 'repo/k/kustomization.yaml': 'resources:\n  - link\n' });
      symlinkSync(join(outside, 'x'), join(linked, 'repo/k/link'));
      expect(refusal(join(linked, 'repo'), 'k')).toBe(
        'k/kustomization.yaml: resources entry "link" leads outside the repository; only paths in the repository are built',
      );
      const file = tree({
        'repo/k/kustomization.yaml': 'configMapGenerator:\n  - name: x\n    files: [key=../../../../etc/passwd]\n',
      });
      expect(refusal(join(file, 'repo'), 'k')).toMatch(/configMapGenerator\[\]\.files entry .* leads outside/);
      // Climbing up and back into the repository is still inside it.
      expect(
        refusal(
          tree({
            'repo/k/kustomization.yaml': 'resources: [../../repo/b]\n',
            'repo/b/kustomization.yaml': 'resources: []\n',
          }),
          'repo/k',
        ),
      ).toBeNull();
    });

    // Found by an attacker's review of #47: where this parser and kustomize's (Go, YAML 1.1) read a text
    // differently, a field one of them sees the other does not; such a text is refused, not read one way.
    it('refuses a text the two YAML readers could read differently: Go-only line breaks, tags, merge keys, alias bombs', () => {
      const bomb = [
        'a: &a [x, x, x, x, x, x, x, x, x, x]',
        ...Array.from({ length: 10 }, (_, i) => {
          const prev = String.fromCharCode(97 + i);
          const next = String.fromCharCode(98 + i);
          return `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
        }),
      ].join('\n');
      const cases: Record<string, [string, RegExp]> = {
        u2028: ['# a note\u2028resources: [../outside/base]\n', /line break only YAML 1\.1 knows/],
        u0085: ['# a note\u0085resources: ["http://127.0.0.1:9/x.yaml"]\n', /line break only YAML 1\.1 knows/],
        u2029: ['# a note\u2029resources: [../outside]\n', /line break only YAML 1\.1 knows/],
        binary: ['resources: [!!binary Li4vb3V0c2lkZS9iYXNl]\n', /tagged tag:yaml\.org,2002:binary/],
        custom: ['resources: [!path ../outside]\n', /tagged !path/],
        mergeAfter: [
          'labels:\n- pairs: {x: z}\n  fields: [&evil {path: evil.yaml}]\npatches:\n- {path: ok.yaml, <<: *evil}\n',
          /merge key/,
        ],
        mergeHidden: ['x: &base\n  resources:\n    - github.com/org/repo\n<<: *base\n', /merge key/],
        bomb: [`${bomb}\nresources: []\n`, /more aliases than it can be read with/],
      };
      for (const [name, [text, why]] of Object.entries(cases)) {
        const message = refusal(tree({ 'k/kustomization.yaml': text }), 'k');
        expect({ name, message }).toEqual({ name, message: expect.stringMatching(/^k\/kustomization\.yaml: /) });
        expect(message).toMatch(why);
      }
      const plugin = refusal(
        tree({ 'p/kustomization.yaml': 'transformers: [gen.yaml]\n', 'p/gen.yaml': `${bomb}\n` }),
        'p',
      );
      expect(plugin).toMatch(/^p\/gen\.yaml: holds more aliases/);
    });

    describe('plugin configurations (generators, transformers, validators): what each loads is checked too', () => {
      const inlineGenerator = (body: string) =>
        `generators:\n  - |\n${`apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: leak\n${body}`.replace(/^/gm, '    ')}\n`;

      it('refuses an inline generator reading a file outside the repository, by files, envs or env, however spelt', () => {
        for (const [body, field] of [
          ['files:\n  - leak=/proc/self/environ\n', 'files'],
          ['files: [/proc/self/environ]\n', 'files'],
          ['envs: [/proc/self/environ]\n', 'envs'],
          ['env: ../../../etc/passwd\n', 'env'],
          ['FILES: [x=/proc/self/environ]\n', 'FILES'],
        ]) {
          const root = tree({ 'k/kustomization.yaml': inlineGenerator(body) });
          expect(refusal(root, 'k')).toMatch(
            new RegExp(
              `^k/kustomization\\.yaml: generators\\[\\]\\.ConfigMapGenerator\\.${field} entry ".*" leads outside the repository`,
            ),
          );
        }
      });

      it('refuses a URL in an inline generator, transformer or validator', () => {
        const root = tree({
          'g/kustomization.yaml': inlineGenerator('files: [x=http://127.0.0.1:9/secret]\n'),
          't/kustomization.yaml':
            'transformers:\n  - |\n    apiVersion: builtin\n    kind: PatchTransformer\n    metadata: {name: p}\n    path: https://127.0.0.1:9/patch.yaml\n',
        });
        expect(refusal(root, 'g')).toMatch(
          /^g\/kustomization\.yaml: generators\[\]\.ConfigMapGenerator\.files entry "http:\/\/127\.0\.0\.1:9\/secret" is a remote resource/,
        );
        expect(refusal(root, 't')).toMatch(
          /^t\/kustomization\.yaml: transformers\[\]\.PatchTransformer\.path entry .* is a remote resource/,
        );
      });

      it('reads a generator file and checks what it loads; a folder of them, or a plugin kubectl would not run as a builtin, is refused', () => {
        const root = tree({
          'f/kustomization.yaml': 'generators: [gen.yaml]\n',
          'f/gen.yaml':
            '---\napiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: s}\nfiles: [ok.txt]\n---\napiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: t}\nenvs: [/proc/self/environ]\n',
          'd/kustomization.yaml': 'generators: [gens]\n',
          'd/gens/kustomization.yaml': 'resources: []\n',
          'x/kustomization.yaml':
            'transformers:\n  - |\n    apiVersion: someteam.example.com/v1\n    kind: Exec\n    metadata: {name: e}\n',
        });
        expect(refusal(root, 'f')).toMatch(
          /^f\/kustomization\.yaml: generators\[\]\.SecretGenerator\.envs entry "\/proc\/self\/environ" leads outside/,
        );
        expect(refusal(root, 'd')).toMatch(/^d\/kustomization\.yaml: generators entry "gens" is a folder/);
        expect(refusal(root, 'x')).toMatch(
          /^x\/kustomization\.yaml: transformers entry: plugin configuration "someteam\.example\.com\/v1\/Exec" is not one of kustomize's builtin plugins/,
        );
      });

      it("accepts builtin plugins that load only the repository's files (field paths included)", () => {
        const root = tree({
          'k/kustomization.yaml': `${inlineGenerator('files: [app.conf, key=conf/x.ini]\nenvs: [vars.env]\n')}transformers:\n  - |\n    apiVersion: builtin\n    kind: LabelTransformer\n    metadata: {name: l}\n    labels: {team: a}\n    fieldSpecs:\n      - path: metadata/labels\n        create: true\n`,
        });
        expect(refusal(root, 'k')).toBeNull();
      });

      // Whatever inline plugin configuration a repository holds, no location outside it passes the check.
      it('property: an inline plugin configuration naming a path outside the repository, at any depth, is refused', () => {
        const outsidePath = fc.constantFrom(
          '/proc/self/environ',
          '/etc/passwd',
          '../../../../etc/shadow',
          '/dev/zero',
          'http://127.0.0.1:9/x',
        );
        const field = fc.constantFrom(
          'files',
          'envs',
          'env',
          'path',
          'paths',
          'valuesFile',
          'Files',
          'ENVS',
          'chartHome',
        );
        const kind = fc.constantFrom(
          'ConfigMapGenerator',
          'SecretGenerator',
          'PatchTransformer',
          'HelmChartInflationGenerator',
          'ReplacementTransformer',
        );
        const list = fc.constantFrom('generators', 'transformers', 'validators');
        const nesting = fc.array(fc.constantFrom('spec', 'replacements', 'items', 'source'), { maxLength: 3 });
        fc.assert(
          fc.property(list, kind, field, outsidePath, nesting, fc.boolean(), (l, k, f, value, path, asKeyValue) => {
            const leaf = { [f]: [asKeyValue && f.toLowerCase() === 'files' ? `k=${value}` : value] };
            const config = {
              apiVersion: 'builtin',
              kind: k,
              metadata: { name: 'x' },
              ...path.reduceRight<object>((inner, key) => ({ [key]: [inner] }), leaf),
            };
            const root = tree({
              'k/kustomization.yaml': `${l}:\n  - |\n${stringify(config).replace(/^/gm, '    ')}\n`,
            });
            const message = refusal(root, 'k');
            return message !== null && /leads outside the repository|is a remote resource/.test(message);
          }),
          { numRuns: 60 },
        );
      });
    });

    it('accepts a local tree (inline patches, cycles of folders) and refuses one it cannot read', () => {
      const root = tree({
        'a/kustomization.yaml':
          'resources:\n  - ../b\n  - x.yaml\npatches:\n  - patch: |-\n      - op: add\n        path: /metadata/annotations/docs\n        value: https://example.com\n',
        'b/kustomization.yaml': 'resources:\n  - ../a\n',
        'bad/kustomization.yaml': 'resources: [\n',
      });
      expect(refusal(root, 'a')).toBeNull();
      expect(refusal(root, 'bad')).toMatch(/^bad\/kustomization\.yaml: cannot be read as YAML/);
    });
  });
});
