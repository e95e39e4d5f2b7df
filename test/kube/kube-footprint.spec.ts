import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FakeKube } from '../support/fake-kube';
import { projectRoot } from '../support/files';

const DIST = join(projectRoot(), 'dist');

/**
 * In plain Node, as the service runs it (the built code; jest loads modules itself and the whole client with them):
 * every module the process loads is recorded, the management kubeconfig is read as the service reads it, and the
 * kube library's calls are made against a test API server (HTTPS, its CA in the kubeconfig, a bearer token).
 */
const CHILD = `
const { registerHooks } = require('node:module');
const loaded = [];
registerHooks({ load(url, context, nextLoad) { loaded.push(url); return nextLoad(url, context); } });
const { managementKubeConfig } = require(${JSON.stringify(join(DIST, 'src/kubernetes/kube-clients.js'))});
const kube = require(${JSON.stringify(join(DIST, 'libs/kube/src/index.js'))});
(async () => {
  const kc = managementKubeConfig(process.env.KUBECONFIG);
  const outcome = await new kube.ScaffoldJobs(kc, { namespace: 'provisioning' }).outcome('r1');
  const secret = await kube.readInputSecret(kc, { namespace: 'platform', name: 'in' }, 'test');
  const generated = loaded.filter((u) => /client-node\\/dist\\/gen\\//.test(u)).map((u) => u.replace(/^.*\\/dist\\/gen\\//, ''));
  console.log(JSON.stringify({ outcome, data: secret.data, generated }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('the Kubernetes client in plain Node: KubeConfig and the JSON calls, without the generated APIs and models', () => {
  let fake: FakeKube;
  beforeAll(async () => {
    fake = await new FakeKube().start();
  });
  afterAll(() => fake.stop());

  it('loads none of the generated models or APIs, and its calls answer as in the tests', async () => {
    fake.putSecret('platform', 'in', { k: 'v' });
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', CHILD], {
      env: { ...process.env, KUBECONFIG: fake.kubeconfigFile() },
      cwd: projectRoot(),
    });
    const seen = JSON.parse(stdout);
    expect(seen.outcome).toEqual({ state: 'missing' });
    expect(seen.data).toEqual({ k: Buffer.from('v').toString('base64') });
    // What config.js needs of the generated code: its configuration, servers, auth, HTTP and middleware types.
    expect(seen.generated.filter((file: string) => /^(models|apis|types)\/|^index\.js$/.test(file))).toEqual([]);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /apis/batch/v1/namespaces/provisioning/jobs/scaffold-r1',
      'GET /api/v1/namespaces/platform/secrets/in',
    ]);
  });
});
