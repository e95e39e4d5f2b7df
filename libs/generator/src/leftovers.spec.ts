import { findLeftovers, MAX_LEFTOVERS, OwnValues, ReferenceIdentifier } from './leftovers';

const OWN: OwnValues = {
  domain: 'acme.example.com',
  clusterName: 'acme',
  acmeEmail: 'ops@acme.example.com',
  region: 'eu-west-1',
};
const scan = (text: string, ids: ReferenceIdentifier[], file = 'kubernetes/acme/app.yaml', own = OWN) =>
  findLeftovers([[file, Buffer.from(text)]], ids, own);
const matched = (text: string, ids: ReferenceIdentifier[]) => scan(text, ids).leftovers.map((l) => l.matched);

describe('findLeftovers', () => {
  it('finds the reference domain and its subdomains, but not the new domain under it', () => {
    const text = `kind: Ingress
metadata: {name: web, namespace: apps}
spec:
  rules:
    - host: grafana.example.com
    - host: grafana.acme.example.com
    - host: example.community
  tls: [{hosts: [example.com]}]
`;
    expect(scan(text, [{ kind: 'domain', value: 'example.com' }]).leftovers).toEqual([
      {
        file: 'kubernetes/acme/app.yaml',
        object: 'Ingress apps/web',
        field: 'spec.rules[0].host',
        value: 'grafana.example.com',
        identifier: 'domain',
        matched: 'grafana.example.com',
        flag: '--replace grafana.example.com=grafana.acme.example.com',
      },
      expect.objectContaining({ field: 'spec.tls[0].hosts[0]', matched: 'example.com' }),
    ]);
  });

  it('matches cluster and environment names as whole words, never in a Git branch or inside a word', () => {
    const text = `kind: GitRepository
metadata: {name: main-repo}
spec:
  ref: {branch: main}
  url: https://example.org/domain/maintenance
`;
    const found = scan(text, [{ kind: 'cluster-name', value: 'main' }]).leftovers;
    expect(found.map((l) => [l.field, l.matched])).toEqual([['metadata.name', 'main']]);
  });

  it("leaves an environment's word inside another party's host name, but not inside the reference's hosts or a name", () => {
    const text = `kind: ClusterIssuer
metadata: {name: letsencrypt-staging}
spec:
  acme:
    server: https://acme-staging-v02.api.letsencrypt.org/directory
    solvers: [{http01: {ingress: {class: staging.internal-nginx}}}]
  note: grafana.staging.example.com
`;
    const ids: ReferenceIdentifier[] = [
      { kind: 'environment', value: 'staging' },
      { kind: 'domain', value: 'example.com' },
    ];
    const found = scan(text, ids).leftovers.map((l) => [l.field, l.identifier, l.matched]);
    expect(found).toEqual([
      ['metadata.name', 'environment', 'staging'],
      // Not a DNS name (no top-level label of letters): an ingress class, the cluster's word.
      ['spec.acme.solvers[0].http01.ingress.class', 'environment', 'staging'],
      ['spec.note', 'environment', 'staging'],
      ['spec.note', 'domain', 'grafana.staging.example.com'],
    ]);
  });

  it('looks for the host around a word within a DNS name of length, so a long run of host characters stays linear', () => {
    const text = `a: "${'staging-'.repeat(100_000)}x.org"\n`;
    const found = scan(text, [{ kind: 'environment', value: 'staging' }]);
    // Far from the end, the run is no host name (it is cut at 253 characters and holds no dot): listed, once.
    expect(found.leftovers.map((l) => l.matched)).toEqual(['staging']);
  });

  it("finds a repository in every spelling, and never looks into a Secret's values", () => {
    const ids: ReferenceIdentifier[] = [{ kind: 'repository-url', value: 'github.com/onedr0p/home-ops' }];
    expect(
      matched(
        'a: ssh://git@github.com/onedr0p/home-ops\nb: git@github.com:onedr0p/home-ops.git\nc: https://github.com/onedr0p/home-ops-x\n',
        ids,
      ),
    ).toEqual(['github.com/onedr0p/home-ops', 'github.com:onedr0p/home-ops.git']);
    expect(matched('kind: Secret\nmetadata: {name: s}\nstringData: {url: github.com/onedr0p/home-ops}\n', ids)).toEqual(
      [],
    );
  });

  it("skips identifiers that are the new cluster's own or given for it, and suggests --var in cluster-vars", () => {
    const ids: ReferenceIdentifier[] = [
      { kind: 'region', value: 'eu-west-1' },
      { kind: 'endpoint', value: '10.0.0.10' },
      { kind: 'cluster-name', value: 'main' },
    ];
    const text =
      'kind: ConfigMap\nmetadata: {name: cluster-settings}\ndata: {REGION: eu-west-1, API: 10.0.0.10, NAME: main}\n';
    const own = { ...OWN, given: ['10.0.0.10'], varsConfigMap: 'cluster-settings' };
    expect(scan(text, ids, 'k/a.yaml', own).leftovers.map((l) => l.flag)).toEqual(['--var NAME=acme']);
  });

  it('lists text files by line, and stops listing past its bound (counted, not listed)', () => {
    const lines = Array.from({ length: MAX_LEFTOVERS + 7 }, () => 'main').join('\n');
    const result = scan(lines, [{ kind: 'environment', value: 'main' }], 'k/config.toml');
    expect(result.leftovers).toHaveLength(MAX_LEFTOVERS);
    expect(result.leftovers[0]).toMatchObject({ object: '', field: 'line 1' });
    expect(result.notListed).toBe(7);
  });

  it('scans a large file in bounded time', () => {
    const text = `a: "${'x.'.repeat(400_000)}example.co"\n`;
    const started = Date.now();
    expect(matched(text, [{ kind: 'domain', value: 'example.com' }])).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
