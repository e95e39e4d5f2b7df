import { holdsString, parseDocuments, readBodies, sharedDocuments, stringifyDocuments } from './yaml-docs';

describe('parseDocuments', () => {
  const text =
    '# the web Ingress\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web # kept\nspec:\n  rules:\n    - host: web.example.com\n---\nkind: Service\n';

  it('hands out documents a caller may edit without changing what the next caller of the same text gets', () => {
    const first = parseDocuments(text, 'web.yaml');
    first[0].setIn(['spec', 'rules', 0, 'host'], 'changed.example.org');
    first[1].set('kind', 'Deployment');
    const second = parseDocuments(text, 'web.yaml');
    expect(second).toHaveLength(2);
    expect(stringifyDocuments(second)).toBe(stringifyDocuments(parseDocuments(text, 'other-name.yaml')));
    expect(second[0].getIn(['spec', 'rules', 0, 'host'])).toBe('web.example.com');
    expect(second[1].get('kind')).toBe('Service');
    expect(stringifyDocuments(second)).toContain('# the web Ingress');
  });

  it('names the file of a document that does not parse, every time it is asked', () => {
    expect(() => parseDocuments('a: [1, 2\n', 'broken.yaml')).toThrow(/^broken\.yaml: /);
    expect(() => parseDocuments('a: [1, 2\n', 'broken.yaml')).toThrow(/^broken\.yaml: /);
  });
});

describe('parses kept by content digest', () => {
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  domain: example.com\n';

  it('hands out the same parse for the same bytes, whatever the file is called, and a fresh one once the bytes change', () => {
    const first = readBodies(text, 'a/settings.yaml');
    expect(readBodies(`${text}`, 'b/other-name.yaml')).toBe(first);
    expect(sharedDocuments(text, 'c.yaml')).toBe(sharedDocuments(text, 'd.yaml'));
    expect(first[0].data.domain).toBe('example.com');
    const changed = readBodies(text.replace('example.com', 'example.org'), 'a/settings.yaml');
    expect(changed).not.toBe(first);
    expect(changed[0].data.domain).toBe('example.org');
    expect(readBodies(text, 'a/settings.yaml')[0].data.domain).toBe('example.com');
  });

  it('refuses an edit of a shared value, so the next reader of the same bytes reads the file', () => {
    const body = readBodies(text, 'settings.yaml')[0];
    expect(() => {
      body.data.domain = 'changed.example.net';
    }).toThrow(TypeError);
    expect(() => body.metadata.labels === undefined && Object.assign(body.metadata, { labels: {} })).toThrow(TypeError);
    expect(readBodies(text, 'settings.yaml')[0].data).toEqual({ domain: 'example.com' });
  });

  it('gives editable copies that leave the shared parse as the file says', () => {
    const copy = parseDocuments(text, 'settings.yaml')[0];
    copy.setIn(['data', 'domain'], 'edited.example.net');
    expect(sharedDocuments(text, 'settings.yaml')[0].getIn(['data', 'domain'])).toBe('example.com');
    expect(readBodies(text, 'settings.yaml')[0].data.domain).toBe('example.com');
  });
});

describe('holdsString', () => {
  it('finds a string at any depth, and only an equal one', () => {
    const body = { spec: { values: [{ email: 'ops@example.com' }] }, n: 3 };
    expect(holdsString(body, ['ops@example.com'])).toBe(true);
    expect(holdsString(body, ['ops@example'])).toBe(false);
    expect(holdsString(null, ['x'])).toBe(false);
  });
});

describe('reading values files with Go templates (truxnell/home-cluster: `{{ .PLEX_APIKEY }}` as a map key)', () => {
  it("reads them without the YAML library's warnings reaching the command line's stderr", () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const [body] = readBodies('config:\n  {{ .PLEX_APIKEY }}: x\n', 'helmrelease.yaml');
      expect(Object.keys(body.config)).toEqual(['{ ? { .PLEX_APIKEY } }']);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
