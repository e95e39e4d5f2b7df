/**
 * Flux post-build variable substitution (`spec.postBuild`), as kustomize-controller applies it to
 * every object a Kustomization builds: `${NAME}`, `${NAME:=default}` and `${NAME:-default}` are
 * replaced, `$${NAME}` is the escape for a literal `${NAME}`. Flux turns an undefined variable
 * into an empty string without a word; the scaffolder reports it instead.
 */

/** Flux's rule for variable names. */
export const VARIABLE_NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

/** Objects carrying this annotation set to "disabled" are applied without substitution. */
export const SUBSTITUTE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/substitute';

// $${...} (escape), or ${NAME}, ${NAME:=default}, ${NAME:-default}.
const REFERENCE = /\$\$\{[^}]*\}|\$\{([_a-zA-Z][_a-zA-Z0-9]*)(?::[=-]([^}]*))?\}/g;

export interface VariableUse {
  name: string;
  hasDefault: boolean;
}

/** The variables a text refers to, escapes excluded. */
export function variableUses(text: string): VariableUse[] {
  const uses: VariableUse[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    if (m[1]) uses.push({ name: m[1], hasDefault: m[2] !== undefined });
  }
  return uses;
}

/** Replaces every reference the way Flux does; `undefinedNames` lists those with neither a value nor a default. */
export function substitute(text: string, vars: Readonly<Record<string, string>>): { text: string; undefinedNames: string[] } {
  const undefinedNames = new Set<string>();
  const out = text.replace(REFERENCE, (whole, name: string | undefined, fallback: string | undefined) => {
    if (!name) return whole.slice(1);
    if (Object.prototype.hasOwnProperty.call(vars, name)) return vars[name];
    if (fallback !== undefined) return fallback;
    undefinedNames.add(name);
    return '';
  });
  return { text: out, undefinedNames: [...undefinedNames] };
}

export const substitutionDisabled = (body: any) => body?.metadata?.annotations?.[SUBSTITUTE_ANNOTATION] === 'disabled';

/**
 * One object with variables substituted, for the checks on what a cluster will receive. Flux
 * substitutes the object's YAML text; substituting inside the parsed strings gives the same text
 * (scalars stay strings, e.g. replicas "3"), which is all the checks look at.
 */
export function substituteObject(body: any, vars: Readonly<Record<string, string>>): { body: any; undefinedNames: string[] } {
  if (substitutionDisabled(body)) return { body, undefinedNames: [] };
  const missing = new Set<string>();
  const visit = (node: any): any => {
    if (typeof node === 'string') {
      const r = substitute(node, vars);
      r.undefinedNames.forEach((n) => missing.add(n));
      return r.text;
    }
    if (Array.isArray(node)) return node.map(visit);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [visit(k), visit(v)]));
    return node;
  };
  return { body: visit(body), undefinedNames: [...missing] };
}
