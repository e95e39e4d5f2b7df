import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { tempDir } from './files';
import { requiredTool } from './tools';

const run = promisify(execFile);

export const CHART = join(__dirname, '../../helm/gitops-scaffolder');

export interface Rendered {
  /** The template file that produced the object (helm's `# Source:` line). */
  source: string;
  obj: any;
}

/** Values as a file for helm's -f (never --set: its type coercion is not what a values file does). */
function valuesFile(values: object): string {
  const file = join(tempDir('helm-values'), 'values.yaml');
  writeFileSync(file, stringify(values));
  return file;
}

/** The chart rendered by the real `helm template` with extra values; hooks included. */
export async function helmTemplate(
  values: object = {},
  release = 'release',
  namespace = 'kubeopera-core',
): Promise<Rendered[]> {
  const { stdout } = await run(
    requiredTool('helm'),
    ['template', release, CHART, '--namespace', namespace, '-f', valuesFile(values)],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return parseAllDocuments(stdout)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`helm rendered invalid YAML: ${doc.errors[0].message}`);
      const source = /# Source: [^/]+\/(.+)/.exec(doc.commentBefore ?? '')?.[1] ?? '';
      return { source, obj: doc.toJS() };
    })
    .filter((r) => r.obj);
}

/** `helm template` expected to fail (a values.schema.json violation): its error text. */
export async function helmTemplateError(values: object): Promise<string> {
  try {
    await helmTemplate(values);
  } catch (e: any) {
    return String(e.stderr ?? e.message);
  }
  throw new Error('helm template accepted the values');
}

/** `helm lint --strict` with extra values: its output; throws (with the output) when lint fails. */
export async function helmLint(values: object = {}): Promise<string> {
  const { stdout } = await run(requiredTool('helm'), ['lint', '--strict', CHART, '-f', valuesFile(values)]);
  return stdout;
}
