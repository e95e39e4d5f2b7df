import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { programPath } from '#libs/git/build-box';
import { tempDir, writeTree } from '../../../test/support/files';
import { stringify } from 'yaml';
import { SEALED_BY_ANNOTATION } from '#libs/sealing';
import { sopsEncrypt } from '#libs/sealing/sops';
import { ageIdentity } from '../../../test/support/sops-open';
import { buildInputsDigest, whatDecidesBuilds } from './build-inputs';
import { GeneratorValidationError } from './errors';
import { checkWithFileNamesWhereNeeded, kustomizeBuild, kustomizeBuildAll } from './validate';

/** A layer that reads a shared base outside its folder and a patch file below it. */
const TREE = {
  'base/kustomization.yaml': 'resources:\n  - cm.yaml\n',
  'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  domain: example.com\n',
  'layer/kustomization.yaml': 'resources:\n  - ../base\npatches:\n  - path: patches/label.yaml\n',
  'layer/patches/label.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    layer: one\n',
  'unrelated/notes.yaml': 'kind: Notes\n',
};

function tree(): string {
  const root = tempDir('build-inputs');
  writeTree(root, TREE);
  return root;
}

describe('buildInputsDigest', () => {
  it('is the same for the same files in another folder, and changes with any byte, file or setting the build reads', () => {
    const a = tree();
    const b = tree();
    const digest = (root: string, settings = ['kubectl']) => buildInputsDigest(join(root, 'layer'), settings);
    expect(digest(a)).toBe(digest(b));
    expect(digest(a, ['kubectl', 'loose'])).not.toBe(digest(a));

    writeFileSync(join(b, 'unrelated/notes.yaml'), 'kind: Other\n');
    expect(digest(b)).toBe(digest(a));

    const before = digest(b);
    writeFileSync(join(b, 'base/cm.yaml'), TREE['base/cm.yaml'].replace('example.com', 'example.org'));
    expect(digest(b)).not.toBe(before);

    const c = tree();
    writeFileSync(join(c, 'layer/patches/extra.yaml'), 'kind: Extra\n');
    expect(digest(c)).not.toBe(digest(a));
  });
});

/** A SealedSecret as the generator writes it: the values sealed with `values`, for the certificate `cert`. */
const sealed = (values: string[], cert: string, extra = '') =>
  [
    'apiVersion: bitnami.com/v1alpha1',
    'kind: SealedSecret',
    'metadata:',
    '  name: db',
    '  namespace: data',
    '  annotations:',
    `    ${SEALED_BY_ANNOTATION}: ${cert}`,
    'spec:',
    '  encryptedData:',
    `    password: Ag${values[0]}==`,
    `    username: Ag${values[1]}==`,
    '  template:',
    '    metadata:',
    '      name: db',
    `      namespace: data${extra}`,
    '',
  ].join('\n');

describe('what of a file decides a build', () => {
  const digestOf = (text: string) =>
    createHash('sha256')
      .update(whatDecidesBuilds(Buffer.from(text)))
      .digest('hex');

  it('is a SealedSecret without its sealed values and the certificate it records: sealed again, it builds the same', () => {
    const first = sealed(['AAAA', 'BBBB'], '28:3b:a2');
    expect(digestOf(sealed(['CCCC', 'DDDD'], 'ff:00:11'))).toBe(digestOf(first));
    // The keys, the names, the template, anything beside the sealed values: a different build.
    expect(digestOf(first.replace('username:', 'user:'))).not.toBe(digestOf(first));
    expect(digestOf(first.replace('name: db\n  namespace', 'name: other\n  namespace'))).not.toBe(digestOf(first));
    expect(digestOf(sealed(['AAAA', 'BBBB'], '28:3b:a2', '\n    type: kubernetes.io/tls'))).not.toBe(digestOf(first));
  });

  it('is a SOPS file without its encrypted values, data key and time: encrypted again for the same recipient, it builds the same', async () => {
    const recipient = ageIdentity().recipient;
    const secret = (password: string, key = 'password') =>
      sopsEncrypt(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'db', namespace: 'data' },
          stringData: { [key]: password },
        },
        { recipients: [recipient], now: new Date(Date.now() - Math.random() * 1e9) },
      ).then((doc) => stringify(doc));
    const first = await secret('first-password-0123456789');
    expect(first).toContain('ENC[AES256_GCM,');
    expect(digestOf(await secret('other-password-9876543210'))).toBe(digestOf(first));
    expect(digestOf(await secret('first-password-0123456789', 'user'))).not.toBe(digestOf(first));
    const otherRecipient = await sopsEncrypt(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'data' }, stringData: { password: 'x' } },
      { recipients: [ageIdentity().recipient] },
    );
    expect(digestOf(stringify(otherRecipient))).not.toBe(digestOf(first));
    // Text in those places that is not what sops writes (it would change the YAML around it) counts byte for byte.
    const broken = first.replace(/ENC\[AES256_GCM,data:[^,]*/, 'ENC[AES256_GCM,data: x');
    expect(digestOf(broken.replace('data: x', 'data: y'))).not.toBe(digestOf(broken));
    const outdented = first.replace(/(-----BEGIN AGE ENCRYPTED FILE-----\n)/, '$1extra: line\n');
    expect(digestOf(outdented.replace('extra: line', 'other: line'))).not.toBe(digestOf(outdented));
    // The time's closing quote dropped: the YAML around it changes, so it counts.
    const quoted = first.replace(/lastmodified: (\S+)/, 'lastmodified: "$1"');
    expect(digestOf(quoted.replace(/Z"$/m, 'Z'))).not.toBe(digestOf(quoted));
  });

  it('is every byte of any other file, and of any value not in the shape and place of ciphertext', () => {
    const configMap = 'kind: ConfigMap\nspec:\n  encryptedData:\n    password: one\n';
    expect(whatDecidesBuilds(Buffer.from(configMap))).toEqual(Buffer.from(configMap));
    // A value of another shape or type than sealing writes (a collection, a number, a separator YAML reads as part of
    // a string) is never taken for one that passed.
    const first = sealed(['AAAA', 'BBBB'], '28:3b:a2');
    for (const other of ['[a,b]', '*alias', '{a:b}', '987654321', 'true'])
      expect(digestOf(first.replace('AgAAAA==', other))).not.toBe(digestOf(first));
    const nbsp = first.replace('password: AgAAAA==', 'password:\u00a0AgAAAA==');
    expect(digestOf(nbsp.replace('AgAAAA', 'AgZZZZ'))).not.toBe(digestOf(nbsp));
    // Another document of the file with base64 under a key of that name: a plaintext Secret is never a sealed one.
    const plain = (value: string) =>
      `${first}---\napiVersion: v1\nkind: Secret\nmetadata: {name: t}\ndata: {\n encryptedData:\n   x,\n password: ${value}\n }\n`;
    expect(digestOf(plain('aHVudGVyMg=='))).not.toBe(digestOf(plain('RU5DW0FFUzI1Nl9HQ00=')));
    expect(digestOf(sealed(['AAAA', 'BBBB'], 'not-a-fingerprint'))).not.toBe(digestOf(first));
    // Found by parsing, not by line: a sealed value written as a folded block is the same string of the same shape.
    const folded = sealed(['AAAA', 'BBBB'], 'x').replace('password: AgAAAA==', 'password: >-\n      AgAAAA==');
    expect(digestOf(folded.replace('AgAAAA', 'AgZZZZ'))).toBe(digestOf(folded));
  });
});

/**
 * A kubectl that logs each kustomize build it runs, then runs the real one (by its path: a build's
 * PATH leads nowhere). A shell script does not start in the bubblewrap box, so its builds run in the
 * next box this machine has, where the log is writable.
 */
function countingKubectl(): { path: string; builds: () => number } {
  const dir = tempDir('kubectl');
  const log = join(dir, 'builds.log');
  writeFileSync(log, '');
  const path = join(dir, 'kubectl');
  const real = programPath('kubectl');
  writeFileSync(path, `#!/bin/sh\n[ "$1" = kustomize ] && echo build >> '${log}'\nexec '${real}' "$@"\n`, {
    mode: 0o755,
  });
  return { path, builds: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

describe('kustomizeBuild of identical inputs', () => {
  it('is built once; a changed byte builds again; what a caller edits never reaches the next caller', async () => {
    const kubectl = countingKubectl();
    const build = (root: string) =>
      kustomizeBuild(join(root, 'layer'), 'clusters/c/layer', { roots: [root], kubectl: kubectl.path });
    const first = tree();
    const built = await build(first);
    expect(kubectl.builds()).toBe(1);
    expect(built).toEqual([
      {
        body: expect.objectContaining({ data: { domain: 'example.com' } }),
        file: 'clusters/c/base/cm.yaml',
      },
    ]);
    built[0].body.data.domain = 'edited.example.net';

    const second = tempDir('build-inputs-copy');
    cpSync(first, second, { recursive: true });
    const again = await build(second);
    expect(kubectl.builds()).toBe(1);
    expect(again).toEqual([
      { body: expect.objectContaining({ data: { domain: 'example.com' } }), file: 'clusters/c/base/cm.yaml' },
    ]);

    writeFileSync(join(second, 'base/cm.yaml'), TREE['base/cm.yaml'].replace('example.com', 'example.org'));
    const changed = await build(second);
    expect(kubectl.builds()).toBe(2);
    expect(changed[0].body.data).toEqual({ domain: 'example.org' });
    expect(changed[0].body.metadata.labels).toEqual({ layer: 'one' });
  });

  it('is built once for SealedSecrets sealed again (the full pass after its rehearsal), again for another Secret', async () => {
    const kubectl = countingKubectl();
    const layer = (secret: string) => {
      const root = tempDir('build-inputs-sealed');
      writeTree(root, { 'layer/kustomization.yaml': 'resources:\n  - db.yaml\n', 'layer/db.yaml': secret });
      return kustomizeBuild(join(root, 'layer'), 'clusters/c/layer', { roots: [root], kubectl: kubectl.path });
    };
    await layer(sealed(['AAAA', 'BBBB'], '28:3b:a2'));
    await layer(sealed(['CCCC', 'DDDD'], 'ff:00:11'));
    expect(kubectl.builds()).toBe(1);
    await layer(sealed(['AAAA', 'BBBB'], '28:3b:a2').replace('username:', 'user:'));
    expect(kubectl.builds()).toBe(2);
  });
});

describe('kustomizeBuildAll: several layers by one kubectl', () => {
  /** Three layers: one patching the shared base, one with a generator and a workload, one with a namespace transformer. */
  const LAYERS = {
    ...TREE,
    'apps/kustomization.yaml':
      'namespace: apps\nresources:\n  - deploy.yaml\nconfigMapGenerator:\n  - name: cfg\n    literals: [a=b]\n',
    'apps/deploy.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers: [{name: c, image: x}]\n',
    'db/kustomization.yaml': 'namespace: db\nresources:\n  - svc.yaml\n',
    'db/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports: [{port: 5432}]\n',
  };
  const folders = (root: string, names: string[]) =>
    names.map((name) => ({ absDir: join(root, name), label: `clusters/c/${name}` }));

  it('gives each layer what it builds alone (files, annotations, generated names), in one build', async () => {
    const kubectl = countingKubectl();
    const root = tempDir('build-all');
    writeTree(root, LAYERS);
    const together = await kustomizeBuildAll(folders(root, ['layer', 'apps', 'db']), {
      roots: [root],
      kubectl: kubectl.path,
    });
    expect(kubectl.builds()).toBe(1);

    // Another kubectl path: nothing kept from the build above is reused.
    const aloneKubectl = countingKubectl();
    const separately = [];
    for (const name of ['layer', 'apps', 'db'])
      separately.push(
        await kustomizeBuild(join(root, name), `clusters/c/${name}`, { roots: [root], kubectl: aloneKubectl.path }),
      );
    expect(aloneKubectl.builds()).toBe(3);
    expect(together).toEqual(separately);
    expect(together[1].map((o) => o.body.metadata)).toEqual([
      { name: expect.stringMatching(/^cfg-/), namespace: 'apps' },
      { name: 'web', namespace: 'apps', annotations: { team: 'web' } },
    ]);
    expect(together[2][0]).toEqual({
      body: expect.objectContaining({ kind: 'Service' }),
      file: 'clusters/c/db/svc.yaml',
    });
  });

  it('builds layers alone when they clash in one build, and a broken layer fails naming itself', async () => {
    const kubectl = countingKubectl();
    const root = tempDir('build-clash');
    writeTree(root, {
      ...LAYERS,
      'again/kustomization.yaml': 'namespace: db\nresources:\n  - svc.yaml\n',
      'again/svc.yaml': LAYERS['db/svc.yaml'],
    });
    const built = await kustomizeBuildAll(folders(root, ['db', 'again']), { roots: [root], kubectl: kubectl.path });
    expect(built.map((objects) => objects.map((o) => `${o.body.metadata.namespace}/${o.body.metadata.name}`))).toEqual([
      ['db/db'],
      ['db/db'],
    ]);
    expect(kubectl.builds()).toBe(3);

    writeTree(root, { 'broken/kustomization.yaml': 'resources:\n  - missing.yaml\n' });
    await expect(
      kustomizeBuildAll(folders(root, ['apps', 'broken']), { roots: [root], kubectl: kubectl.path }),
    ).rejects.toThrow(/kustomize build of clusters\/c\/broken failed/);
  });
});

describe('checkWithFileNamesWhereNeeded', () => {
  it('checks once without file names when nothing is reported, keeping what that check recorded', async () => {
    const summary = { warnings: [] as string[], checked: [] as string[] };
    const runs: boolean[] = [];
    await checkWithFileNamesWhereNeeded(summary, async (s, fileNames) => {
      runs.push(fileNames);
      s.checked.push('layer');
    });
    expect(runs).toEqual([false]);
    expect(summary).toEqual({ warnings: [], checked: ['layer'] });
  });

  it('checks again with file names when the first check warns or refuses; only the second one is kept', async () => {
    const summary = { warnings: ['earlier'], checked: [] as string[] };
    const runs: boolean[] = [];
    await checkWithFileNamesWhereNeeded(summary, async (s, fileNames) => {
      runs.push(fileNames);
      s.checked.push('layer');
      s.warnings.push(fileNames ? 'apps/deploy.yaml: holds the old domain' : 'clusters/c/apps: holds the old domain');
    });
    expect(runs).toEqual([false, true]);
    expect(summary).toEqual({ warnings: ['earlier', 'apps/deploy.yaml: holds the old domain'], checked: ['layer'] });

    const refused = checkWithFileNamesWhereNeeded({ warnings: [] }, async (_, fileNames) => {
      throw new GeneratorValidationError(fileNames ? 'apps/deploy.yaml: bad field' : 'clusters/c/apps: bad field');
    });
    await expect(refused).rejects.toThrow('apps/deploy.yaml: bad field');
  });

  it('checks with file names at once after a check of the same kind reported, and fast again once one reports nothing', async () => {
    const runs: boolean[] = [];
    const check = (warns: boolean) => async (s: { warnings: string[] }, fileNames: boolean) => {
      runs.push(fileNames);
      if (warns) s.warnings.push(fileNames ? 'apps/deploy.yaml: warned' : 'clusters/c/apps: warned');
    };
    const kind = `reference-${Math.random()}`;
    const first = { warnings: [] as string[] };
    await checkWithFileNamesWhereNeeded(first, check(true), kind);
    const second = { warnings: [] as string[] };
    await checkWithFileNamesWhereNeeded(second, check(true), kind);
    // Another kind has no habit yet.
    await checkWithFileNamesWhereNeeded({ warnings: [] }, check(false), `${kind}-other`);
    const quiet = { warnings: [] as string[] };
    await checkWithFileNamesWhereNeeded(quiet, check(false), kind);
    await checkWithFileNamesWhereNeeded({ warnings: [] }, check(false), kind);
    expect(runs).toEqual([false, true, true, false, true, false]);
    expect([first.warnings, second.warnings, quiet.warnings]).toEqual([
      ['apps/deploy.yaml: warned'],
      ['apps/deploy.yaml: warned'],
      [],
    ]);

    const refusedKind = `${kind}-refused`;
    await expect(
      checkWithFileNamesWhereNeeded(
        { warnings: [] },
        async () => {
          throw new GeneratorValidationError('refused');
        },
        refusedKind,
      ),
    ).rejects.toThrow('refused');
    runs.length = 0;
    await checkWithFileNamesWhereNeeded({ warnings: [] }, check(false), refusedKind);
    expect(runs).toEqual([true]);
  });

  it('does not check again after a failure that is not a finding (kubectl missing, a bug)', async () => {
    const runs: boolean[] = [];
    const failed = checkWithFileNamesWhereNeeded({ warnings: [] }, async (_, fileNames) => {
      runs.push(fileNames);
      throw new Error('spawn kubectl ENOENT');
    });
    await expect(failed).rejects.toThrow('ENOENT');
    expect(runs).toEqual([false]);
  });
});
