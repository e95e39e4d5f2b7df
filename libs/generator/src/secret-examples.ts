/**
 * Secret shapes kept beside the platform: plaintext `*.yaml.example` files (for example
 * `bootstrap/sops/secret-templates/`) that show a team how each encrypted Secret is laid out. The
 * annotations of an encrypted Secret cannot be edited without its key (SOPS authenticates the whole
 * file), so the generator also reads its `gitops-scaffolder.io/*` annotations from the example of
 * the same Secret. The reference's own annotations win.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  GENERATED_ANNOTATION,
  referenceSecrets,
  SUPPLIED_ANNOTATION,
  TEMPLATE_ANNOTATION_PREFIX,
  type ReferenceSecret,
} from './credential-plan';
import { GeneratorInputError } from './errors';
import { withSourceUse } from './source-secrets';
import type { ReferenceObject } from './reference';
import { readBodies } from './yaml-docs';
import { readRepoFile } from './repo-files';

const EXAMPLE_FILE = /\.ya?ml\.example$/;
/** Folders that never hold a platform's own files (and can be large). */
const SKIPPED_DIR = (name: string) => name.startsWith('.') || name === 'node_modules';

/** Example files under the reference root, repository-relative; links are not followed. */
function exampleFiles(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory() && !SKIPPED_DIR(entry.name)) out.push(...exampleFiles(root, child));
    else if (entry.isFile() && EXAMPLE_FILE.test(entry.name)) out.push(child);
  }
  return out;
}

/** The Secrets the reference's example files describe (a file that is not YAML is refused, naming it). */
export function secretExamples(root: string): ReferenceSecret[] {
  return exampleFiles(root).flatMap((file) => {
    let bodies: any[];
    try {
      bodies = [...readBodies(readRepoFile(root, file, 'utf8'), file)];
    } catch (e) {
      throw new GeneratorInputError(
        `${file}: an example Secret file that is not YAML (${(e as Error).message.split('\n')[0]})`,
      );
    }
    return bodies
      .filter((b) => b?.kind === 'Secret' && typeof b.metadata?.name === 'string')
      .map((body) => ({ namespace: body.metadata.namespace ?? '', body, file }));
  });
}

const isScaffolderAnnotation = (key: string) =>
  key === SUPPLIED_ANNOTATION || key === GENERATED_ANNOTATION || key.startsWith(TEMPLATE_ANNOTATION_PREFIX);

/**
 * The reference Secrets with the scaffolder annotations of their examples added (matched by
 * namespace and name; an example without a namespace matches by name). Only annotations are taken:
 * an example's values are placeholders.
 */
export function withExampleAnnotations(secrets: ReferenceSecret[], examples: ReferenceSecret[]): ReferenceSecret[] {
  if (examples.length === 0) return secrets;
  return secrets.map((s) => {
    const name = s.body?.metadata?.name;
    const example = examples.find(
      (e) => e.body.metadata.name === name && (e.namespace === '' || e.namespace === s.namespace),
    );
    const adds = Object.entries(example?.body.metadata.annotations ?? {}).filter(([key]) =>
      isScaffolderAnnotation(key),
    );
    if (!example || adds.length === 0) return s;
    const annotations = {
      ...Object.fromEntries(adds.map(([k, v]) => [k, String(v)])),
      ...(s.body.metadata.annotations ?? {}),
    };
    return {
      ...s,
      body: { ...s.body, metadata: { ...s.body.metadata, annotations } },
      file: `${s.file} (annotations from ${example.file})`,
    };
  });
}

/**
 * Every reference Secret among the objects, with the annotations of its example and the Flux sources
 * among the objects that read it (what the credential plan reads).
 */
export function referenceSecretShapes(root: string, objects: ReferenceObject[]): ReferenceSecret[] {
  return withSourceUse(withExampleAnnotations(referenceSecrets(objects), secretExamples(root)), objects);
}
