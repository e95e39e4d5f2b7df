import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, writeTree } from '../../../test/support/files';
import { main } from './cli';
import { GeneratorInputError } from './errors';
import { checkReadableLayout } from './readable-layout';

const FLUX_SYNC = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  path: ./clusters/prod
  sourceRef:
    kind: GitRepository
    name: flux-system
`;
/** As argoproj/argocd-example-apps writes its app-of-apps children. */
const ARGO_APPLICATION = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  destination:
    namespace: guestbook
    server: https://kubernetes.default.svc
  project: default
  source:
    path: guestbook
    repoURL: https://github.com/argoproj/argocd-example-apps
`;
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
`;

const tree = (files: Record<string, string>) => {
  const root = tempDir('layout');
  writeTree(root, files);
  return root;
};
const refusal = (root: string, env: string) => {
  try {
    checkReadableLayout(root, env);
  } catch (e) {
    expect(e).toBeInstanceOf(GeneratorInputError);
    return (e as Error).message;
  }
  return null;
};

describe('references the generator cannot read the way Flux does are refused with the file and what to do', () => {
  it('reads a Flux repository (also one that has Argo CD objects beside its Flux Kustomizations)', () => {
    expect(refusal(tree({ 'clusters/prod/flux-system/gotk-sync.yaml': FLUX_SYNC }), 'prod')).toBeNull();
    const mixed = tree({
      'clusters/prod/flux-system/gotk-sync.yaml': FLUX_SYNC,
      'clusters/prod/apps/guestbook.yaml': ARGO_APPLICATION,
    });
    expect(refusal(mixed, 'prod')).toBeNull();
    // A FluxInstance (Flux Operator) is an entry point too.
    const operator = tree({
      'clusters/prod/flux.yaml': 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n',
    });
    expect(refusal(operator, 'prod')).toBeNull();
  });

  it('refuses template sources Flux would read unrendered, naming every one at once', () => {
    const syncMain = FLUX_SYNC.replace('./clusters/prod', './clusters/main');
    const jinja = tree({
      'clusters/main/flux-system/gotk-sync.yaml': syncMain,
      'clusters/main/apps/echo/app/helmrelease.yaml.j2': 'spec:\n  values:\n    host: "#{ bootstrap_domain }#"\n',
      'clusters/main/apps/echo/app/kustomization.yaml.j2': 'resources: [helmrelease.yaml]\n',
    });
    expect(refusal(jinja, 'main')).toMatch(
      /^clusters\/main\/apps\/echo\/app\/helmrelease\.yaml\.j2 \(and 1 more file: clusters\/main\/apps\/echo\/app\/kustomization\.yaml\.j2\) are each a template source that must be rendered before Flux can read it\. The generator reads Flux repositories: .* docs\/generator\.md \("Environment models"\)\. Render the templates/,
    );
    // A kustomization that lists a template has kustomize parse the template itself.
    const listed = tree({
      'clusters/main/flux-system/gotk-sync.yaml': syncMain,
      'clusters/main/kustomization.yaml': 'resources: [flux-system, app.yaml.j2]\n',
      'clusters/main/app.yaml.j2': 'kind: ConfigMap\n',
      'clusters/main/app.yaml': 'kind: ConfigMap\n',
    });
    expect(refusal(listed, 'main')).toMatch(/^clusters\/main\/app\.yaml\.j2 is a template source/);
    // A makejinja project not rendered yet has no environment folder at all.
    const unrendered = tree({ 'makejinja.toml': '[makejinja]\ninputs = ["./templates"]\n', 'templates/x.yaml.j2': '' });
    expect(refusal(unrendered, 'main')).toMatch(/^makejinja\.toml is a template source/);
  });

  it('reads a repository whose templates Flux never reads (onedr0p/home-ops: Talos templates beside the Flux tree)', () => {
    // Old behaviour: "talos/cluster.yaml.j2 is a template source that must be rendered", for files no Kustomization applies.
    const homeOps = tempDir('home-ops-talos');
    cpSync(join(__dirname, '../../../test/fixtures/public/onedr0p-home-ops-talos'), homeOps, { recursive: true });
    expect(refusal(homeOps, 'main')).toBeNull();
    // Rendered templates (the .yaml beside its .j2) and templates of data files in a folder Flux reads are carried.
    const rendered = tree({
      'clusters/main/flux-system/gotk-sync.yaml': FLUX_SYNC.replace('./clusters/prod', './clusters/main'),
      'clusters/main/apps/helmrelease.yaml.j2': 'spec: {}\n',
      'clusters/main/apps/helmrelease.yaml': 'spec: {}\n',
      'clusters/main/apps/config.toml.j2': 'x = "{{ y }}"\n',
    });
    expect(refusal(rendered, 'main')).toBeNull();
  });

  it('refuses an Argo CD repository, naming the file and the kind', () => {
    const argo = tree({ 'clusters/prod/apps/guestbook.yaml': `${DEPLOYMENT}---\n${ARGO_APPLICATION}` });
    expect(refusal(argo, 'prod')).toMatch(
      /^clusters\/prod\/apps\/guestbook\.yaml is an Argo CD Application \(argoproj\.io\), and no Flux object was found\..*Argo CD repositories are not read/,
    );
    // Without clusters/ at all, as argocd-example-apps is laid out.
    expect(refusal(tree({ 'apps/templates/guestbook.yaml': ARGO_APPLICATION }), 'prod')).toMatch(
      /^apps\/templates\/guestbook\.yaml is an Argo CD Application/,
    );
  });

  it('refuses an environment with no Flux entry point', () => {
    expect(refusal(tree({ 'clusters/dev/web/deployment.yaml': DEPLOYMENT }), 'dev')).toMatch(
      /^clusters\/dev has no Flux entry point: none of its files holds a Flux Kustomization \(kustomize\.toolkit\.fluxcd\.io\) or FluxInstance \(fluxcd\.controlplane\.io\)\..*Bootstrap Flux for that environment/,
    );
  });

  it('reads objects as YAML in any style, and leaves files too large to be manifests unparsed', () => {
    const flow = tree({
      'clusters/json/sync.yaml': JSON.stringify({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
      }),
    });
    expect(refusal(flow, 'json')).toBeNull();
    const root = tree({ 'clusters/big/flux-system/gotk-sync.yaml': FLUX_SYNC });
    writeFileSync(join(root, 'clusters/big/huge.yaml'), `${ARGO_APPLICATION}---\n`.repeat(4 * 1024));
    expect(refusal(root, 'big')).toBeNull();
    // Text that is not YAML is no object (the environment model reports it, with its file).
    const broken = tree({ 'clusters/bad/x.yaml': 'a: [\n', 'clusters/bad/sync.yaml': FLUX_SYNC });
    expect(refusal(broken, 'bad')).toBeNull();
  });

  it('exits 2 with the message from the command line, writing nothing', async () => {
    const template = tree({ 'clusters/prod/apps/guestbook.yaml': ARGO_APPLICATION });
    const repo = tempDir('layout-repo');
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await main([
        ...['--repo', repo, '--template', template, '--reference-env', 'prod', '--cluster-name', 'acme'],
        ...['--domain', 'acme.example.com', '--region', 'eu-west-1', '--acme-email', 'ops@acme.example.com'],
        '--infra-only',
      ]);
      expect(code).toBe(2);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain(
        'clusters/prod/apps/guestbook.yaml is an Argo CD Application',
      );
      expect(readdirSync(repo)).toEqual([]);
    } finally {
      stderr.mockRestore();
    }
  });
});
