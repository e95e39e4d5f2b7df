import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { GeneratorValidationError } from './errors';

export interface KustomizeBuild {
  available: boolean;
  output: string;
}

let kubectlPresent: boolean | undefined;

function kubectlAvailable(): boolean {
  if (kubectlPresent === undefined) {
    const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
    kubectlPresent = !probe.error;
  }
  return kubectlPresent;
}

/** `kubectl kustomize DIR`: the same build Flux's kustomize-controller runs. */
export function kustomizeBuild(absDir: string, label: string): KustomizeBuild {
  if (!kubectlAvailable()) return { available: false, output: '' };
  const run = spawnSync('kubectl', ['kustomize', absDir], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) {
    const reason = (run.stderr || run.error?.message || 'unknown error').trim().split('\n').slice(0, 3).join(' / ');
    throw new GeneratorValidationError(`kustomize build of ${label} failed: ${reason.replaceAll(absDir, label)}`);
  }
  return { available: true, output: run.stdout };
}

/**
 * Checks on what a layer builds to: no plaintext Secret with values, and every Ingress host
 * under the new domain (a host patch that missed its target shows up here).
 */
export function checkBuiltObjects(output: string, label: string, domain: string): void {
  for (const doc of parseAllDocuments(output) as any[]) {
    const body = doc.toJS?.();
    if (!body) continue;
    const id = `${body.kind} ${body.metadata?.namespace ?? ''}/${body.metadata?.name ?? ''}`;
    if (body.kind === 'Secret' && (Object.keys(body.data ?? {}).length > 0 || Object.keys(body.stringData ?? {}).length > 0)) {
      throw new GeneratorValidationError(`${label} builds a plaintext ${id}`);
    }
    if (body.kind === 'Ingress') {
      const hosts: string[] = [
        ...(body.spec?.rules ?? []).map((r: any) => r?.host).filter(Boolean),
        ...(body.spec?.tls ?? []).flatMap((t: any) => t?.hosts ?? []),
      ];
      const stray = hosts.find((h) => h !== domain && !h.endsWith('.' + domain));
      if (stray) throw new GeneratorValidationError(`${label} builds ${id} with host ${stray}, outside ${domain}`);
    }
  }
}
