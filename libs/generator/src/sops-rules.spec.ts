import { parse } from 'yaml';
import { clusterRule, clusterRules, foldersOf, pathRegexFor, withClusterRule } from './sops-rules';

const AGE = 'age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq';
const owns = (folder: string) => ['clusters/acme', 'apps/acme'].some((d) => folder === d || folder.startsWith(d + '/'));

/** sops's choice: the first rule whose path_regex matches the repository-relative path. */
const ruleFor = (text: string, path: string) =>
  parse(text).creation_rules.find((r: any) => new RegExp(r.path_regex).test(path));

describe('.sops.yaml creation rules for the folders a pass encrypts in', () => {
  it('anchors and escapes the folders of the files, and matches only YAML files directly in them', () => {
    const regex = pathRegexFor([
      'apps/acme/secrets/redis.yaml',
      'infrastructure/configs/acme/auth.yaml',
      'apps/acme/secrets/git.yaml',
    ]);
    expect(regex).toBe('^(?:apps/acme/secrets|infrastructure/configs/acme)/[^/]+\\.ya?ml$');
    const re = new RegExp(regex);
    expect(re.test('apps/acme/secrets/redis.yaml')).toBe(true);
    expect(re.test('infrastructure/configs/acme/new.yml')).toBe(true);
    for (const other of [
      'x/apps/acme/secrets/a.yaml',
      'apps/acme/secrets/sub/a.yaml',
      'apps/acme/secretsX/a.yaml',
      'apps/acme/secrets/a.json',
    ])
      expect(re.test(other)).toBe(false);
    expect(pathRegexFor(['apps/a.b+c/s.yaml'])).toBe('^apps/a\\.b\\+c/[^/]+\\.ya?ml$');
  });

  it('reads back the folders of its own rules and of the older whole-folder rule, and of nothing else', () => {
    expect(foldersOf(pathRegexFor(['apps/a.b/s.yaml', 'clusters/acme/x/y.yaml']))).toEqual([
      'apps/a.b',
      'clusters/acme/x',
    ]);
    expect(foldersOf('^clusters/acme/.*\\.ya?ml$')).toEqual(['clusters/acme']);
    for (const other of ['clusters/acme/.*\\.yaml$', '.*', '^(?:a|b.*)/[^/]+\\.ya?ml$', 42])
      expect(foldersOf(other)).toBeUndefined();
  });

  it('creates the file with the rule; no file and nothing encrypted writes nothing', () => {
    const text = withClusterRule(null, clusterRule(['apps/acme/s.yaml'], [AGE, AGE.replace(/q$/, 'p')]), owns)!;
    expect(parse(text).creation_rules).toEqual([
      {
        path_regex: '^apps/acme/[^/]+\\.ya?ml$',
        encrypted_regex: '^(data|stringData)$',
        age: `${AGE},${AGE.replace(/q$/, 'p')}`,
      },
    ]);
    expect(withClusterRule(null, clusterRule([], [AGE]), owns)).toBeNull();
    expect(
      parse(withClusterRule('creation_rules:\n', clusterRule(['apps/acme/s.yaml'], [AGE]), owns)!).creation_rules,
    ).toHaveLength(1);
    expect(() => withClusterRule('creation_rules: {}\n', undefined, owns)).toThrow(/creation_rules must be a list/);
  });

  it("puts the cluster's rule first, replaces its earlier ones, keeps the others with their comments, and is stable", () => {
    const before = [
      '# Rules of the fleet',
      'creation_rules:',
      '  # the development cluster',
      '  - path_regex: clusters/dev/secrets/.*\\.yaml$',
      '    age: age1dev',
      '  - path_regex: ^clusters/acme/.*\\.ya?ml$',
      '    age: age1old',
      '  - path_regex: ^apps/other/[^/]+\\.ya?ml$',
      '    age: age1other',
      '',
    ].join('\n');
    const rule = clusterRule(['apps/acme/secrets/a.yaml', 'clusters/acme/db/b.yaml'], [AGE])!;
    const after = withClusterRule(before, rule, owns)!;
    expect(parse(after).creation_rules.map((r: any) => r.age)).toEqual([AGE, 'age1dev', 'age1other']);
    expect(after).toContain('# Rules of the fleet');
    expect(after).toContain('# the development cluster');
    expect(ruleFor(after, 'apps/acme/secrets/a.yaml').age).toBe(AGE);
    expect(ruleFor(after, 'clusters/dev/secrets/x.yaml').age).toBe('age1dev');
    expect(withClusterRule(after, rule, owns)).toBeNull();
    // Nothing encrypted any more: the cluster's rule goes, the others stay.
    expect(parse(withClusterRule(after, undefined, owns)!).creation_rules.map((r: any) => r.age)).toEqual([
      'age1dev',
      'age1other',
    ]);
  });

  it("puts a whole-file rule for a secretGenerator's encrypted files before the manifests' rule, and owns both", () => {
    const files = ['apps/acme/secrets/app.enc.env', 'apps/acme/secrets/token.encrypted'];
    const rules = clusterRules(['apps/acme/secrets/redis.yaml'], files, [AGE]);
    expect(rules[0]).toEqual({
      path_regex: '^(?:apps/acme/secrets/app\\.enc\\.env|apps/acme/secrets/token\\.encrypted)$',
      age: AGE,
    });
    expect(rules[1].encrypted_regex).toBe('^(data|stringData)$');
    const text = withClusterRule('creation_rules:\n  - path_regex: ^other/.*$\n    age: x\n', rules, owns)!;
    // Every value of a generator's file; only data/stringData of a manifest; a file of another path is not ours.
    expect(ruleFor(text, 'apps/acme/secrets/app.enc.env').encrypted_regex).toBeUndefined();
    expect(ruleFor(text, 'apps/acme/secrets/redis.yaml').encrypted_regex).toBe('^(data|stringData)$');
    expect(ruleFor(text, 'apps/acme/secrets/app.enc.envX')?.path_regex).not.toBe(rules[0].path_regex);
    expect(foldersOf(rules[0].path_regex)).toEqual(['apps/acme/secrets']);
    // A second run replaces both (they name only the cluster's folders) and changes nothing.
    expect(withClusterRule(text, rules, owns)).toBeNull();
    expect(foldersOf('^apps/acme/a.+b$')).toBeUndefined();
  });
});
