import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { KubeApi, KubeConfig, kubeError } from '#libs/kube';
import { tempDir } from '../support/files';

/** A CA, and certificates it signs: the API server's (for 127.0.0.1) and a client's (CN scaffolder). */
function pki() {
  const dir = tempDir('kube-pki');
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ca = (name: string) =>
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    );
  const signed = (name: string, cn: string, ext: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    writeFileSync(join(dir, `${name}.ext`), ext);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  };
  ca('ca');
  ca('other-ca');
  signed('server', 'apiserver', 'subjectAltName=IP:127.0.0.1\n');
  signed('client', 'scaffolder', 'extendedKeyUsage=clientAuth\n');
  const pem = (file: string) => readFileSync(join(dir, file), 'utf8');
  return { dir, pem, b64: (file: string) => Buffer.from(pem(file)).toString('base64') };
}

/** An unsigned JWT (the client reads its expiry only; the API server would check the signature). */
const jwt = (exp: number) =>
  [{ alg: 'none' }, { iss: 'https://issuer.invalid', exp }]
    .map((p) => Buffer.from(JSON.stringify(p)).toString('base64url'))
    .join('.') + '.sig';

describe('KubeApi over KubeConfig: each kind of kubeconfig credential reaches the API server (HTTPS test server)', () => {
  const certs = pki();
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // Answers every Secret read with what authenticated the request: the bearer token and the client certificate.
    server = createServer(
      {
        key: certs.pem('server.key'),
        cert: certs.pem('server.crt'),
        ca: certs.pem('ca.crt'),
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const client = socket.authorized ? String(socket.getPeerCertificate().subject?.CN ?? '') : '';
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            kind: 'Secret',
            metadata: { name: 's', annotations: { authorization: req.headers.authorization ?? '', client } },
          }),
        );
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  /** A kubeconfig for the test server, trusting `ca`, with the given user. */
  const kubeconfig = (user: object, ca = 'ca.crt') => {
    const kc = new KubeConfig();
    kc.loadFromString(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: url, 'certificate-authority-data': certs.b64(ca) } }],
        users: [{ name: 'u', user }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    return kc;
  };
  const seen = async (kc: KubeConfig) => (await new KubeApi(kc).read('secrets', 'ns', 's')).metadata?.annotations;

  it('a bearer token', async () => {
    expect(await seen(kubeconfig({ token: 'static-token' }))).toEqual({
      authorization: 'Bearer static-token',
      client: '',
    });
  });

  it("an exec plugin's token", async () => {
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec' },
    };
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: ['-e', `process.stdout.write(${JSON.stringify(JSON.stringify(credential))})`],
      interactiveMode: 'Never',
    };
    expect(await seen(kubeconfig({ exec }))).toEqual({ authorization: 'Bearer from-exec', client: '' });
  });

  it("an OIDC provider's id token", async () => {
    const idToken = jwt(Math.floor(Date.now() / 1000) + 3600);
    const authProvider = {
      name: 'oidc',
      config: { 'id-token': idToken, 'client-id': 'k', 'idp-issuer-url': 'https://issuer.invalid' },
    };
    expect(await seen(kubeconfig({ 'auth-provider': authProvider }))).toEqual({
      authorization: `Bearer ${idToken}`,
      client: '',
    });
  });

  it('a client certificate', async () => {
    const user = { 'client-certificate-data': certs.b64('client.crt'), 'client-key-data': certs.b64('client.key') };
    expect(await seen(kubeconfig(user))).toEqual({ authorization: '', client: 'scaffolder' });
  });

  it('the in-cluster service account: its token file and CA', async () => {
    const root = tempDir('in-cluster');
    const account = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(account, { recursive: true });
    writeFileSync(join(account, 'token'), 'service-account-token');
    writeFileSync(join(account, 'ca.crt'), certs.pem('ca.crt'));
    writeFileSync(join(account, 'namespace'), 'gitops-scaffolder');
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = new URL(url).port;
    const kc = new KubeConfig();
    try {
      kc.loadFromCluster(root);
    } finally {
      for (const [k, v] of [
        ['KUBERNETES_SERVICE_HOST', saved.host],
        ['KUBERNETES_SERVICE_PORT', saved.port],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
    expect(await seen(kc)).toEqual({ authorization: 'Bearer service-account-token', client: '' });
  });

  it("refuses an API server whose certificate the kubeconfig's CA did not sign", async () => {
    const error = await seen(kubeconfig({ token: 'static-token' }, 'other-ca.crt')).catch((e: unknown) => e);
    const classified = kubeError(error, 'reading Secret ns/s');
    expect(classified.status).toBeUndefined();
    expect(classified.message).toMatch(/^reading Secret ns\/s: .*(certificate|self.signed)/i);
  });
});
