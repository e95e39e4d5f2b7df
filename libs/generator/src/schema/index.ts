/**
 * Every built object against the schema of its kind, strictly (unknown fields are errors), with
 * Flux's duration rule; a kind no package describes, against the CRD the same build applies;
 * kinds no schema describes are counted, never passed as checked.
 */
import { GeneratorValidationError } from '../errors';
import { artifactGeneratorValidator } from './artifact-generator';
import { CrdSchemaError } from './crd-shape';
import { crdSchemas, CrdSchemas, crdValidator } from './crd-schemas';
import { droppedFieldRule } from './dropped-fields';
import { fluxInstanceValidator } from './flux-instance';
import { fluxFieldRule, isFluxApi } from './flux-rules';
import { CompiledValidator, packagedValidator } from './schema-index';
import { fieldPath, SchemaProblem, strictValidate } from './strict-validate';

/** An object a kustomize build produced, and the repository file it came from (when kustomize says). */
export interface BuiltObject {
  body: any;
  file?: string;
}

export interface SchemaCheck {
  checked: number;
  /** `apiVersion kind` of every object no schema describes. */
  withoutSchema: string[];
  /** Problems reported, not refused (a file:// source, see localSource). */
  warnings: string[];
}

/** At most this many problems are named in one error: enough to fix a file, short enough to read in a step's log. */
const PROBLEMS_SHOWN = 5;

/** The schemas written here and the packages' first (known and tested), then the CRDs the build applies. */
function validatorFor(
  apiVersion: string,
  kind: string,
  crds: CrdSchemas,
): CompiledValidator | CrdSchemaError | undefined {
  if (apiVersion === 'source.extensions.fluxcd.io/v1beta1' && kind === 'ArtifactGenerator')
    return artifactGeneratorValidator();
  if (apiVersion === 'fluxcd.controlplane.io/v1' && kind === 'FluxInstance') return fluxInstanceValidator();
  return packagedValidator(apiVersion, kind) ?? crdValidator(crds, apiVersion, kind);
}

/** A variable left for Flux to fill in (its source is outside the repository): its value is not known here. */
const leftForFlux = (p: SchemaProblem) => typeof p.value === 'string' && p.value.includes('${');

/**
 * A GitRepository on a file:// URL: Flux fetches only http, https and ssh, but a file:// target is
 * possible only where the operator allowed the scheme (GIT_ALLOWED_SCHEMES, a development setting),
 * so it is a warning there, with the remedy, rather than a refusal of every local run.
 */
const localSource = (kind: string, p: SchemaProblem) =>
  kind === 'GitRepository' &&
  p.path.join('.') === 'spec.url' &&
  typeof p.value === 'string' &&
  p.value.startsWith('file://');

/** Throws GeneratorValidationError naming the file, the object and the field of each problem (the first few). */
export function checkSchemas(objects: readonly BuiltObject[], label: string): SchemaCheck {
  const result: SchemaCheck = { checked: 0, withoutSchema: [], warnings: [] };
  const found: string[] = [];
  const crds = crdSchemas(objects);
  for (const { body, file } of objects) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) continue;
    const apiVersion = String(body.apiVersion ?? '');
    const kind = String(body.kind ?? '');
    const validate = validatorFor(apiVersion, kind, crds);
    if (!validate) {
      result.withoutSchema.push(`${apiVersion} ${kind}`);
      continue;
    }
    const where = `${file ?? label}: ${kind} ${objectName(body)}`;
    if (validate instanceof CrdSchemaError) {
      found.push(`${where} cannot be checked: ${validate.message}`);
      continue;
    }
    result.checked++;
    const fieldRule = isFluxApi(apiVersion) ? fluxFieldRule : undefined;
    for (const p of strictValidate(validate, asApplied(body), fieldRule, droppedFieldRule(apiVersion, kind))) {
      if (localSource(kind, p))
        result.warnings.push(
          `${where}: spec.url is a file:// URL, which Flux cannot fetch (give repo.flux_url or --source-url)`,
        );
      else if (!leftForFlux(p)) found.push(`${where}: ${fieldPath(p.path)} ${p.message}`);
    }
  }
  if (found.length > 0) {
    const more = found.length > PROBLEMS_SHOWN ? `; and ${found.length - PROBLEMS_SHOWN} more` : '';
    throw new GeneratorValidationError(
      `${label} does not match the schemas the cluster applies: ${found.slice(0, PROBLEMS_SHOWN).join('; ')}${more}`,
    );
  }
  return result;
}

/**
 * What the API server receives: kustomize-controller decrypts a SOPS-encrypted object and drops its
 * `sops` metadata first. A Secret's `data` is read as the API server decodes it (Go's base64 skips
 * line breaks), since kustomize folds long generated values every 76 characters.
 */
function asApplied(body: any): object {
  const { sops, ...rest } = body;
  const applied = sops && typeof sops === 'object' ? rest : body;
  if (body.kind !== 'Secret' || !body.data || typeof body.data !== 'object') return applied;
  const data = Object.fromEntries(
    Object.entries(body.data).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v]),
  );
  return { ...applied, data };
}

const objectName = (body: any) =>
  (body.metadata?.namespace ? `${body.metadata.namespace}/` : '') + String(body.metadata?.name ?? '(no name)');
