import { substitute, substituteObject, variableUses } from '#libs/generator/substitution';

describe('Flux post-build substitution', () => {
  it('replaces ${NAME}, takes defaults only when unset, and keeps $${NAME} as a literal', () => {
    const vars = { DOMAIN: 'acme.io', EMPTY: '' };
    expect(substitute('api.${DOMAIN} ${SIZE:=10Gi} ${SIZE:-5Gi} ${DOMAIN:=x} [${EMPTY:=d}] $${HOME}', vars)).toEqual({
      text: 'api.acme.io 10Gi 5Gi acme.io [] ${HOME}',
      undefinedNames: [],
    });
  });

  it('reports undefined variables (Flux would silently write an empty string)', () => {
    expect(substitute('${A}-${B}-${A}', {})).toEqual({ text: '--', undefinedNames: ['A', 'B'] });
  });

  it('lists uses with and without defaults, ignoring escapes and names Flux does not accept', () => {
    expect(variableUses('${A} ${B:=1} $${C} ${1D} ${E_2}')).toEqual([
      { name: 'A', hasDefault: false },
      { name: 'B', hasDefault: true },
      { name: 'E_2', hasDefault: false },
    ]);
  });

  it('substitutes inside objects, keys included, and skips objects that disable it', () => {
    const body = { kind: 'ConfigMap', metadata: { name: 'x' }, data: { '${K}': 'v-${V}' } };
    expect(substituteObject(body, { K: 'key', V: 'value' }).body.data).toEqual({ key: 'v-value' });
    const disabled = {
      ...body,
      metadata: { name: 'x', annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } },
    };
    expect(substituteObject(disabled, {})).toEqual({ body: disabled, undefinedNames: [] });
  });
});
