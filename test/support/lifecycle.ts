/**
 * What the lifecycle specs (retire, rotate, --all) share: git in a folder, a reference repository made from the
 * shipped template, and an environment scaffolded into a repository by the command line's full pass.
 */
import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { tempDir } from './files';
import { generatorCli } from './generator-cli';

/** git in `dir` with an identity for commits; its trimmed output. */
export const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

/** Registry pull credentials as the command line reads them (the environment). */
export const REGISTRY = {
  REGISTRY_SERVER: 'registry.acme.io',
  REGISTRY_USERNAME: 'puller',
  REGISTRY_PASSWORD: 'RegPw-0123456789abcdef',
};

/** The shipped reference as the only commit of a new repository (its working copy is the template). */
export function referenceRepository(prefix: string): string {
  const dir = tempDir(prefix);
  cpSync(SHIPPED_TEMPLATE, dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'reference');
  return dir;
}

/** The command line's full pass of `cluster` into `repo` (domain `<cluster>.acme.io`), sealing for `certFile`. */
export function scaffoldWithCli(repo: string, template: string, cluster: string, certFile: string) {
  return generatorCli(
    [
      ...['--repo', repo, '--template', template, '--cluster-name', cluster, '--domain', `${cluster}.acme.io`],
      ...['--source-url', 'https://git.example.org/acme/fleet.git', '--region', 'us-east-1'],
      ...['--acme-email', 'ops@acme.io', '--sealing-cert', certFile],
    ],
    REGISTRY,
  );
}
