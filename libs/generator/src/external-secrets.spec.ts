import { parseDocument } from 'yaml';
import { moveRemoteKey, moveRemoteKeys, remoteKeyNames, remoteReferences } from './external-secrets';

const names = remoteKeyNames(
  { domain: 'staging.example.net', names: ['staging', 'stg-eu1'] },
  { domain: 'acme.io', clusterName: 'acme' },
);

describe('ExternalSecret remote keys', () => {
  it('moves whole names (domain first), never inside a longer word; a regexp domain escaped or not', () => {
    expect(moveRemoteKey('kv/staging/app', names, false)).toBe('kv/acme/app');
    expect(moveRemoteKey('staging-redis:password', names, false)).toBe('acme-redis:password');
    expect(moveRemoteKey('stg-eu1/app', names, false)).toBe('acme/app');
    expect(moveRemoteKey('kv/stagingarea/x', names, false)).toBe('kv/stagingarea/x');
    expect(moveRemoteKey('db/staging.example.net/app', names, false)).toBe('db/acme.io/app');
    expect(moveRemoteKey('^app\\.staging\\.example\\.net/.*', names, true)).toBe('^app\\.acme\\.io/.*');
    expect(moveRemoteKey('^staging-.*$', names, true)).toBe('^acme-.*$');
  });

  it("reads a ClusterExternalSecret's template and moves its keys in place", () => {
    const doc = parseDocument(`apiVersion: external-secrets.io/v1
kind: ClusterExternalSecret
metadata:
  name: shared
spec:
  namespaceSelectors: [{matchLabels: {team: a}}]
  externalSecretSpec:
    secretStoreRef: {kind: ClusterSecretStore, name: vault}
    data:
      - secretKey: token
        remoteRef: {key: kv/staging/token}
`);
    expect(remoteReferences(doc.toJS()).map((r) => [r.field, r.value, r.secretKey])).toEqual([
      ['remoteRef.key', 'kv/staging/token', 'token'],
    ]);
    const moves = moveRemoteKeys(doc, 'apps/acme/x.yaml', names);
    expect(moves).toEqual([
      {
        file: 'apps/acme/x.yaml',
        object: 'ClusterExternalSecret shared',
        field: 'remoteRef.key',
        from: 'kv/staging/token',
        to: 'kv/acme/token',
        moved: true,
      },
    ]);
    expect(doc.toJS().spec.externalSecretSpec.data[0].remoteRef.key).toBe('kv/acme/token');
    // Any other object is left alone.
    expect(moveRemoteKeys(parseDocument('kind: ConfigMap\ndata: {k: kv/staging/x}\n'), 'f', names)).toEqual([]);
  });
});
