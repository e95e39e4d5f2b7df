import { execFile } from 'node:child_process';

/**
 * The kubectl every tree is validated with in the tests, the demo and the images (scripts/ensure-services.sh and
 * scripts/demo-tools.sh install it as KUBECTL_PINNED; test/generator/cli.spec.ts holds them to this value). Another
 * kubectl carries another kustomize, which may build a tree differently, so a tree it accepted is not one they check.
 */
export const PINNED_KUBECTL = 'v1.33.9';

/** How to get the pinned kubectl without root: into the project's own tools folder, which then goes first on PATH. */
export const PINNED_KUBECTL_INSTALL =
  'bash scripts/install-kube-tools.sh "$PWD/.work/tools/bin" kubectl && export PATH="$PWD/.work/tools/bin:$PATH"';

/** "v1.32.3" from `kubectl version --client` ("Client Version: v1.32.3", or version.Info{GitVersion:"v1.27.1"} before 1.28). */
export function clientVersion(versionOutput: string): string | null {
  const line = versionOutput.split('\n').find((l) => l.startsWith('Client Version:'));
  return line?.match(/v\d+\.\d+\.\d+[^\s",}]*/)?.[0] ?? null;
}

/**
 * A warning when the kubectl that will validate (the first on PATH unless named) is not the pinned one, naming
 * the pinned version and how to install it; null when it is, or when there is none (validation says so itself).
 */
export function kubectlVersionWarning(kubectl = 'kubectl'): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(kubectl, ['version', '--client'], { timeout: 30_000 }, (error, stdout) => {
      if (error && !stdout) return resolve(null);
      const found = clientVersion(String(stdout));
      if (found === PINNED_KUBECTL) return resolve(null);
      resolve(
        `the kubectl first on PATH is ${found ?? 'of an unknown version'}, not the pinned ${PINNED_KUBECTL} the tests ` +
          `and the service validate with (its kustomize may build trees differently); install the pinned one: ` +
          PINNED_KUBECTL_INSTALL,
      );
    });
  });
}
