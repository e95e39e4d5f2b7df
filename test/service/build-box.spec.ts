/**
 * The box kubectl kustomize runs in, tried with kustomizations that get past the checks made before
 * a build (here: run with LoadRestrictionsNone, as no build of the service is): whatever they name,
 * the program sees none of the service's environment, no file outside its folders and no network,
 * and a read without end is stopped by its limits.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { BoxLevel, boxedCommand, boxLevel } from '#libs/git/build-box';
import { execInHelper } from '#libs/git/helper-process';
import { kustomizeBuild } from '#libs/generator/validate';
import { useListeners } from '../support/listeners';
import { requiredTool } from '../support/tools';

jest.setTimeout(120_000);

const CANARY = 'canary-0d6f1e29c4b84a1f';
/**
 * bwrap is one of the programs the suite needs (scripts/ensure-services.sh installs it): a machine
 * without it fails the first test naming it. As root every level must start, so no level's test is
 * ever skipped here.
 */
const runsAsRoot = process.getuid?.() === 0;

/** A folder with a kustomization (and files), and a secret file beside it, outside it. */
function repository(kustomization: object, files: Record<string, string> = {}) {
  const top = mkdtempSync(join(tmpdir(), 'build-box-'));
  const repo = join(top, 'repo');
  mkdirSync(repo);
  writeFileSync(join(top, 'secret.txt'), `${CANARY}\n`);
  writeFileSync(join(repo, 'kustomization.yaml'), stringify(kustomization));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(repo, name), text);
  return { top, repo, secret: join(top, 'secret.txt') };
}

const generatorOf = (files: string[]) => ({
  configMapGenerator: [{ name: 'leak', files }],
  generatorOptions: { disableNameSuffixHash: true },
});

/** kubectl kustomize with loading unrestricted (which no build of the service asks for), boxed at `level`. */
async function looseBuild(level: BoxLevel, repo: string): Promise<{ ok: boolean; text: string }> {
  const { file, args, env } = boxedCommand(
    level,
    'kubectl',
    ['kustomize', '--load-restrictor=LoadRestrictionsNone', repo],
    [repo],
  );
  return execInHelper(file, args, { env }).then(
    (out) => ({ ok: true, text: out.stdout }),
    (e) => ({ ok: false, text: `${e.message}\n${e.stderr ?? ''}` }),
  );
}

describe('the build box', () => {
  const listeners = useListeners();
  const previous = process.env.SCAFFOLDER_TEST_CANARY;
  beforeAll(() => (process.env.SCAFFOLDER_TEST_CANARY = CANARY));
  afterAll(() => {
    if (previous === undefined) delete process.env.SCAFFOLDER_TEST_CANARY;
    else process.env.SCAFFOLDER_TEST_CANARY = previous;
  });

  it('is the strongest this machine allows: bubblewrap, which the suite installs', async () => {
    requiredTool('bwrap');
    const level = await boxLevel('kubectl', 'auto');
    if (runsAsRoot) expect(level).toBe('bubblewrap');
    else console.warn(`not root: builds run at level ${level} here (bubblewrap needs user namespaces)`);
  });

  const levels: BoxLevel[] = ['bubblewrap', 'network-namespace', 'none'];
  for (const level of levels) {
    it(`${level}: /proc/self/environ holds only the box's own variables`, async () => {
      if (!(await startsAt(level))) return console.warn(`${level} cannot start here`);
      const { repo } = repository(generatorOf(['environ=/proc/self/environ']));
      const built = await looseBuild(level, repo);
      expect(built.ok).toBe(true);
      expect(built.text).toContain('HOME=/nonexistent'); // the environment was read: the box's own
      expect(built.text).not.toContain(CANARY);
      expect(built.text).not.toContain('SCAFFOLDER_TEST_CANARY');
    });
  }

  it('bubblewrap: a file outside the build folders cannot be read, even through a link', async () => {
    if (!(await startsAt('bubblewrap'))) return console.warn('bubblewrap cannot start here');
    const direct = repository(generatorOf([]));
    writeFileSync(join(direct.repo, 'kustomization.yaml'), stringify(generatorOf([`s=${direct.secret}`])));
    const linked = repository(generatorOf(['s=link.txt']));
    symlinkSync(linked.secret, join(linked.repo, 'link.txt'));
    for (const { repo } of [direct, linked]) {
      const built = await looseBuild('bubblewrap', repo);
      expect(built.ok).toBe(false);
      expect(built.text).not.toContain(CANARY);
    }
  });

  for (const level of ['bubblewrap', 'network-namespace'] as const) {
    it(`${level}: no connection leaves the box, loopback included`, async () => {
      if (!(await startsAt(level))) return console.warn(`${level} cannot start here`);
      const url = `http://127.0.0.1:${listeners.http.port}/secret`;
      const { repo } = repository({ resources: [url], ...generatorOf([`x=${url}`]) });
      const built = await looseBuild(level, repo);
      expect(built.ok).toBe(false);
      expect(listeners.http.connections).toBe(0);
    });
  }

  // Found by an attacker's review of #47: a kustomization that slipped past the checks named another
  // repository on the machine as a remote base (file://), which kustomize cloned with git.
  for (const level of levels)
    it(`${level}: kustomize cannot clone a repository of this machine (no git on PATH, no protocol allowed)`, async () => {
      if (!(await startsAt(level))) return console.warn(`${level} cannot start here`);
      const victim = mkdtempSync(join(tmpdir(), 'build-box-victim-'));
      execFileSync('git', ['init', '-q', '--initial-branch=main', victim]);
      mkdirSync(join(victim, 'app'));
      writeFileSync(
        join(victim, 'app/kustomization.yaml'),
        stringify({ configMapGenerator: [{ name: 'victim', literals: [`password=${CANARY}`] }] }),
      );
      execFileSync('git', ['-C', victim, 'add', '.']);
      execFileSync('git', ['-C', victim, '-c', 'user.name=v', '-c', 'user.email=v@example.com', 'commit', '-qm', 'v']);
      const { repo } = repository({ resources: [`file://${victim}//app?ref=main`] });
      const built = await looseBuild(level, repo);
      expect(built.ok).toBe(false);
      expect(built.text).not.toContain(CANARY);
    });

  it('a read without end (a link to /dev/zero) is stopped by the limits in seconds', async () => {
    const level = await boxLevel('kubectl', 'auto');
    const { repo } = repository(generatorOf(['z=zero']));
    symlinkSync('/dev/zero', join(repo, 'zero'));
    const started = Date.now();
    const built = await looseBuild(level, repo);
    expect(built.ok).toBe(false);
    expect(built.text).toMatch(/out of memory|cannot allocate|wrote more than|killed|signal/i);
    console.log(`/dev/zero build at ${level} stopped after ${Date.now() - started} ms`);
  });

  // The service's own builds, with random inline plugin configurations: no build reads outside the copy.
  it("property: the service's builds never show a file outside the repository, whatever plugin configuration it holds", async () => {
    const location = fc.constantFrom('inside.txt', 'link.txt', '../secret.txt', 'SECRET', '/proc/self/environ');
    const field = fc.constantFrom('files', 'envs');
    const list = fc.constantFrom('generators', 'transformers');
    await fc.assert(
      fc.asyncProperty(list, field, location, fc.boolean(), async (l, f, where, inline) => {
        const { top, repo, secret } = repository({});
        writeFileSync(join(repo, 'inside.txt'), 'a=b\n');
        symlinkSync(secret, join(repo, 'link.txt'));
        const value = where === 'SECRET' ? secret : where;
        const config = {
          apiVersion: 'builtin',
          kind: l === 'generators' ? 'ConfigMapGenerator' : 'SecretGenerator',
          metadata: { name: 'p' },
          [f]: [f === 'files' ? `k=${value}` : value],
        };
        if (!inline) writeFileSync(join(repo, 'plugin.yaml'), stringify(config));
        writeFileSync(
          join(repo, 'kustomization.yaml'),
          stringify({ [l]: [inline ? stringify(config) : 'plugin.yaml'] }),
        );
        const text = await kustomizeBuild(repo, 'repo', { roots: [repo] }).then(
          (objects) => JSON.stringify(objects),
          (e: Error) => e.message,
        );
        expect(text).not.toContain(CANARY);
        // The tenant's own entry may be quoted back; no other path of this machine is.
        if (where !== 'SECRET') expect(text).not.toContain(top);
        expect(text).not.toContain('SCAFFOLDER_TEST_CANARY');
      }),
      { numRuns: 25 },
    );
  });
});

const started = new Map<BoxLevel, Promise<boolean>>();
/** Whether a box of `level` starts on this machine (a demanded level that cannot is refused). */
async function startsAt(level: BoxLevel): Promise<boolean> {
  if (!started.has(level))
    started.set(
      level,
      boxLevel('kubectl', level).then(
        () => true,
        () => false,
      ),
    );
  const starts = await started.get(level)!;
  if (runsAsRoot) expect({ level, starts }).toEqual({ level, starts: true });
  return starts;
}
