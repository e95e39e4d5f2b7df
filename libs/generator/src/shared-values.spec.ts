import { Document, parse } from 'yaml';
import type { ReferenceObject } from './reference';
import {
  leftoverReferenceValues,
  moveAcmeEmails,
  SHARED_VALUE_PATCHES,
  sharedValuePatches,
  warnOnce,
  withPatchEntries,
} from './shared-values';

const REFERENCE_EMAIL = 'platform-dev@example.net';

const issuer = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'ClusterIssuer',
  metadata: { name: 'letsencrypt' },
  spec: { acme: { email: REFERENCE_EMAIL, solvers: [{ selector: { dnsZones: ['dev.example.net'] } }] } },
};

const object = (body: any, shared: boolean): ReferenceObject => ({
  file: shared ? 'base/issuers/issuers.yaml' : 'clusters/dev/issuers/issuers.yaml',
  index: 0,
  apiVersion: body.apiVersion,
  kind: body.kind,
  name: body.metadata.name,
  namespace: body.metadata.namespace,
  targetNamespace: body.metadata.namespace,
  body,
  shared,
});

/** The rules a model would run: the ACME e-mail and the DNS zone move. */
const rewrite = (doc: Document) => {
  const moved = moveAcmeEmails(doc, [REFERENCE_EMAIL], 'ops@acme.io');
  const zones = doc.getIn(['spec', 'acme', 'solvers', 0, 'selector', 'dnsZones', 0]);
  if (zones !== 'dev.example.net') return moved;
  doc.setIn(['spec', 'acme', 'solvers', 0, 'selector', 'dnsZones', 0], 'acme.io');
  return true;
};

describe('per-cluster values of shared objects', () => {
  it('writes one JSON6902 patch per shared object the rules change, and none for the environment’s own objects', () => {
    const unchanged = { ...issuer, metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } };
    const patches = sharedValuePatches(
      [object(issuer, true), object(issuer, false), object(unchanged, true)],
      rewrite,
      'acme',
    );
    expect(patches).toHaveLength(1);
    const [p] = patches;
    expect(p.file).toBe(`${SHARED_VALUE_PATCHES}/clusterissuer-default-letsencrypt.yaml`);
    expect(p.target).toEqual({ group: 'cert-manager.io', version: 'v1', kind: 'ClusterIssuer', name: 'letsencrypt' });
    expect(p.content).toMatch(
      /^# Gives ClusterIssuer letsencrypt \(from base\/issuers\/issuers.yaml\) the values of acme/,
    );
    expect(parse(p.content)).toEqual([
      { op: 'replace', path: '/spec/acme/email', value: 'ops@acme.io' },
      { op: 'replace', path: '/spec/acme/solvers/0/selector/dnsZones/0', value: 'acme.io' },
    ]);
    // The shared body is left as it was.
    expect(issuer.spec.acme.email).toBe(REFERENCE_EMAIL);
  });

  it('drops operations the caller keeps for itself (values the folder sets on its own)', () => {
    const patches = sharedValuePatches(
      [object(issuer, true)],
      rewrite,
      'acme',
      (_op, before) => before !== REFERENCE_EMAIL,
    );
    expect(parse(patches[0].content).map((op: any) => op.path)).toEqual(['/spec/acme/solvers/0/selector/dnsZones/0']);
    expect(sharedValuePatches([object(issuer, true)], rewrite, 'acme', () => false)).toEqual([]);
  });

  it('moves only strings that are exactly a reference ACME e-mail', () => {
    const doc = new Document({ data: { contact: REFERENCE_EMAIL, notes: `write to ${REFERENCE_EMAIL}`, other: 'x' } });
    expect(moveAcmeEmails(doc, [REFERENCE_EMAIL], 'ops@acme.io')).toBe(true);
    expect(doc.toJS().data).toEqual({ contact: 'ops@acme.io', notes: `write to ${REFERENCE_EMAIL}`, other: 'x' });
    expect(moveAcmeEmails(new Document({ a: REFERENCE_EMAIL }), [], 'ops@acme.io')).toBe(false);
    // An empty e-mail or a variable Flux fills in is no address: neither is moved or looked for.
    const blanks = new Document({ a: '', b: '${ACME_EMAIL}' });
    expect(moveAcmeEmails(blanks, ['', '${ACME_EMAIL}'], 'ops@acme.io')).toBe(false);
    const built = [{ body: { kind: 'ConfigMap', metadata: { name: 'c' }, data: blanks.toJS() } }];
    expect(leftoverReferenceValues(built, { acmeEmails: ['', '${ACME_EMAIL}'], newDomain: 'acme.io' }, 'L')).toEqual(
      [],
    );
  });

  it('adds patch entries before or after the kustomization’s own, keeping its comments', () => {
    const raw = Buffer.from('resources:\n  - ../base\npatches:\n  # the overlay’s own\n  - path: own.yaml\n');
    const entry = { path: 'scaffolder-values/x.yaml', target: { kind: 'ClusterIssuer', name: 'x', version: 'v1' } };
    const first = withPatchEntries(raw, 'k.yaml', [entry], 'first').toString();
    expect(parse(first).patches.map((p: any) => p.path)).toEqual(['scaffolder-values/x.yaml', 'own.yaml']);
    expect(first).toContain('# the overlay’s own');
    const last = parse(withPatchEntries(raw, 'k.yaml', [entry], 'last').toString());
    expect(last.patches.map((p: any) => p.path)).toEqual(['own.yaml', 'scaffolder-values/x.yaml']);
    expect(parse(withPatchEntries(Buffer.from('resources: []\n'), 'k', [entry], 'last').toString()).patches).toEqual([
      entry,
    ]);
    expect(withPatchEntries(raw, 'k.yaml', [], 'first')).toBe(raw);
  });
});

describe('reference values left in what the cluster applies', () => {
  const ref = { acmeEmails: [REFERENCE_EMAIL], domain: 'dev.example.net', newDomain: 'acme.io' };

  it('lists the ACME e-mail anywhere, with the file and path, without quoting the value', () => {
    const release = {
      kind: 'HelmRelease',
      metadata: { name: 'mailer', namespace: 'ops' },
      spec: { values: { config: `smtp:\n  from: ${REFERENCE_EMAIL}\n` } },
    };
    const found = leftoverReferenceValues([{ body: release, file: 'base/mailer.yaml' }], ref, 'clusters/acme/apps');
    expect(found).toEqual([
      "base/mailer.yaml: HelmRelease ops/mailer spec.values.config still holds the reference's ACME e-mail, which the generator cannot move (applied by clusters/acme/apps); set the new cluster's value by hand",
    ]);
  });

  it('lists names under the reference domain in issuers, external-dns and host fields only', () => {
    const built = [
      {
        body: {
          ...issuer,
          spec: { acme: { email: 'ops@acme.io', solvers: [{ selector: { dnsZones: ['dev.example.net'] } }] } },
        },
      },
      {
        body: {
          kind: 'HTTPRoute',
          metadata: { name: 'status' },
          spec: { hostnames: ['status.dev.example.net', 'status.acme.io'] },
        },
        file: 'base/route.yaml',
      },
      // A registry every cluster pulls from, a longer domain that only ends alike, a host left to Flux.
      { body: { kind: 'Deployment', metadata: { name: 'api' }, spec: { image: 'registry.dev.example.net/api:1' } } },
      {
        body: {
          kind: 'HTTPRoute',
          metadata: { name: 'x' },
          spec: { hostnames: ['api.otherdev.example.net', 'a.${DOMAIN}'] },
        },
      },
    ];
    expect(leftoverReferenceValues(built, ref, 'L').map((w) => w.split(' still')[0])).toEqual([
      'L: ClusterIssuer letsencrypt spec.acme.solvers[0].selector.dnsZones[0]',
      'base/route.yaml: HTTPRoute status spec.hostnames[0]',
    ]);
    expect(leftoverReferenceValues(built, { acmeEmails: [], newDomain: 'acme.io' }, 'L')).toEqual([]);
  });

  it('takes a name under the new domain for the new cluster’s where that domain lies under the reference’s', () => {
    const route = {
      kind: 'HTTPRoute',
      metadata: { name: 'r' },
      spec: { hostnames: ['api.acme.example.net', 'api.example.net'] },
    };
    const found = leftoverReferenceValues(
      [{ body: route }],
      { acmeEmails: [], domain: 'example.net', newDomain: 'acme.example.net' },
      'L',
    );
    expect(found.map((w) => w.split(' still')[0])).toEqual(['L: HTTPRoute r spec.hostnames[1]']);
  });

  it('adds a warning once', () => {
    const warnings = ['a'];
    warnOnce(warnings, ['a', 'b', 'b']);
    expect(warnings).toEqual(['a', 'b']);
  });
});
