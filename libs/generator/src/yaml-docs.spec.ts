import { parseDocuments, stringifyDocuments } from './yaml-docs';

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
