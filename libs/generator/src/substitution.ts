/**
 * Flux post-build variable substitution (`spec.postBuild`), as kustomize-controller applies it to
 * every object a Kustomization builds: `${NAME}`, `${NAME:=default}` and `${NAME:-default}` are
 * replaced, `$${NAME}` is the escape for a literal `${NAME}`. Flux turns an undefined variable
 * into an empty string without a word; the scaffolder reports it instead.
 */
import { parse, stringify } from 'yaml';

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
export function substitute(
  text: string,
  vars: Readonly<Record<string, string>>,
): { text: string; undefinedNames: string[] } {
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
 * One object with variables substituted as Flux does it: kustomize-controller writes the object as
 * YAML, substitutes the text and reads it back, so `replicas: ${REPLICAS}` becomes the integer 3 and
 * a value may even add structure. A result that is no longer one YAML object is reported in
 * `broken` (Flux fails the same Kustomization).
 */
export function substituteObject(
  body: any,
  vars: Readonly<Record<string, string>>,
): { body: any; undefinedNames: string[]; broken?: string } {
  if (substitutionDisabled(body)) return { body, undefinedNames: [] };
  const r = substitute(stringify(body, { lineWidth: 0 }), vars);
  try {
    return { body: parse(r.text), undefinedNames: r.undefinedNames };
  } catch (e) {
    return {
      body,
      undefinedNames: r.undefinedNames,
      broken: `is not valid YAML after substitution (${(e as Error).message.split('\n')[0]})`,
    };
  }
}
