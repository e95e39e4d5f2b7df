import { Document } from 'yaml';
import { GeneratorInputError } from './errors';
import { HOST_PATHS_ANNOTATION, HostMapping, hostsIn, moveHosts } from './hosts';
import { pointerOf, pointerPath } from './patches';

describe('host paths', () => {
  it('finds hosts by kind, and at paths an object adds by annotation', () => {
    const release = {
      kind: 'HelmRelease',
      metadata: {
        name: 'shop',
        annotations: { [HOST_PATHS_ANNOTATION]: 'spec.values.storefront.publicHost, spec.values.aliases[]' },
      },
      spec: {
        values: {
          ingress: { hosts: [{ host: 'shop.dev' }] },
          storefront: { publicHost: 'www.dev' },
          aliases: ['a.dev', 'b.dev'],
          other: { host: 'not.a.host.path' },
        },
      },
    };
    expect(hostsIn(release, 'f.yaml').map((h) => [h.host, h.where])).toEqual([
      ['shop.dev', 'f.yaml spec.values.ingress.hosts[0].host'],
      ['www.dev', 'f.yaml spec.values.storefront.publicHost'],
      ['a.dev', 'f.yaml spec.values.aliases[0]'],
      ['b.dev', 'f.yaml spec.values.aliases[1]'],
    ]);
    expect(hostsIn({ kind: 'ConfigMap', data: { host: 'x.dev' } }, 'f')).toEqual([]);
  });

  it('moves hosts in place through the map first, then the reference domain, leaving others', () => {
    const mapping = new HostMapping('acme.io', 'dev.example.net', { 'podinfo.dev': 'podinfo.acme.io' });
    const doc = new Document({
      kind: 'Certificate',
      spec: { dnsNames: ['podinfo.dev', 'api.dev.example.net', 'elsewhere.org'], commonName: 'dev.example.net' },
    });
    expect(moveHosts(doc, mapping)).toBe(true);
    expect(doc.toJS().spec).toEqual({
      dnsNames: ['podinfo.acme.io', 'api.acme.io', 'elsewhere.org'],
      commonName: 'acme.io',
    });
  });

  it('lists every host with no place, and refuses a map key the reference lacks', () => {
    const mapping = new HostMapping('acme.io', undefined, {});
    const check = () =>
      mapping.checkCovers([
        { host: 'a.dev', where: 'x.yaml' },
        { host: 'b.dev', where: 'y.yaml' },
        { host: 'c.${DOMAIN}', where: 'z.yaml' },
      ]);
    expect(check).toThrow(GeneratorInputError);
    expect(check).toThrow('a.dev (x.yaml); b.dev (y.yaml)');
    expect(check).toThrow('the reference has no domain (give --reference-domain)');
    expect(() =>
      new HostMapping('acme.io', undefined, { 'a.dev': 'a.acme.io', 'zz.dev': 'z.acme.io' }).checkCovers([
        { host: 'a.dev', where: 'x' },
      ]),
    ).toThrow('--host-map zz.dev');
  });

  it('turns JSON pointers into paths and back, escapes included', () => {
    expect(pointerPath('/spec/rules/0/host')).toEqual(['spec', 'rules', 0, 'host']);
    expect(pointerPath('/metadata/annotations/a~1b~0c')).toEqual(['metadata', 'annotations', 'a/b~c']);
    expect(pointerOf(['metadata', 'annotations', 'a/b~c'])).toBe('/metadata/annotations/a~1b~0c');
  });
});
