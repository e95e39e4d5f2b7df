/**
 * A tenant's repository is code: what a kustomization in it can make the service do. The attacks
 * of issue #47 against the real service process: an inline generator (or a generator file) reading
 * the service's environment or a loopback URL, previewed and run. Each is refused naming the
 * kustomization file, nothing connects to the listener, and nothing of the service's settings
 * appears in any answer, event, log line or read-model row.
 */
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { dataPlaces, hitsIn } from '../support/data-places';
import { readTree } from '../support/files';
import { useListeners } from '../support/listeners';
import { createBody } from '../support/run-fixtures';
import { bareRepo, gitLog, pushAsAnotherWriter, TestDatabase, TestNats } from '../support/services';
import { api, API_KEY, untilTerminal } from '../support/service';
import { ServiceProcess } from '../support/service-process';

jest.setTimeout(180_000);

const REGISTRY_PASSWORD = 'TenantContentRegistryPassword-5e6f7a8b';
const CANARY = 'TenantContentCanarySetting-1a2b3c4d';

/** A target repository whose `base/` (which the shipped reference's apps layer builds from) holds `files`, its kustomization edited by `edit`. */
function fleetWithBase(edit: (kustomization: string) => string, files: Record<string, string> = {}) {
  const remote = bareRepo();
  const base = Object.fromEntries(
    Object.entries(readTree(join(SHIPPED_TEMPLATE, 'base'))).map(([rel, text]) => [`base/${rel}`, text]),
  );
  base['base/kustomization.yaml'] = edit(base['base/kustomization.yaml']);
  for (const [rel, text] of Object.entries(files)) base[`base/${rel}`] = text;
  pushAsAnotherWriter(remote.dir, base, 'base with a generator of its own');
  return remote;
}

const generator = (fields: object) =>
  stringify({ apiVersion: 'builtin', kind: 'ConfigMapGenerator', metadata: { name: 'leak' }, ...fields });

/** The attack: the generated value copied into an Ingress host, whose check once quoted it. */
const REPLACEMENT = {
  source: { kind: 'ConfigMap', name: 'leak', fieldPath: 'data.leak' },
  targets: [{ select: { kind: 'Ingress' }, fieldPaths: ['spec.rules.0.host'] }],
};
const withInline = (fields: object) => (k: string) =>
  `${k}\ngenerators:\n  - |\n${generator(fields).replace(/^/gm, '    ')}\nreplacements:\n${stringify([REPLACEMENT]).replace(/^/gm, '  ')}`;

describe('tenant content: a kustomization cannot read the service or reach a host', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: ServiceProcess;
  const cert = makeRsaCert();
  const listeners = useListeners();

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    svc = await ServiceProcess.create({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      REGISTRY_PASSWORD,
      TENANT_CONTENT_CANARY: CANARY,
    });
    await svc.start();
  });
  afterAll(async () => {
    if (svc?.running) await svc.kill('SIGTERM');
    await nats?.destroy();
    await db?.drop();
  });

  const attacks = () => {
    const secretUrl = `http://127.0.0.1:${listeners.http.port}/secret`;
    return [
      { name: 'inline files', edit: withInline({ files: ['leak=/proc/self/environ'] }), field: 'files' },
      { name: 'inline envs', edit: withInline({ envs: ['/proc/self/environ'] }), field: 'envs' },
      { name: 'inline URL', edit: withInline({ files: [`leak=${secretUrl}`] }), field: 'files' },
      {
        name: 'generator file',
        edit: (k: string) => `${k}\ngenerators:\n  - leak-generator.yaml\n`,
        files: { 'leak-generator.yaml': generator({ files: ['leak=../../../../../../proc/self/environ'] }) },
        field: 'files',
      },
    ];
  };

  it('preview: 422 naming the kustomization file and the field, nothing appended, pushed or connected', async () => {
    for (const attack of attacks()) {
      const remote = fleetWithBase(attack.edit, attack.files);
      const log = gitLog(remote.dir);
      const r = await api(svc.base, 'POST', '/api/v1/scaffolds/preview', createBody('leak', remote.url, cert.certPem));
      expect({ attack: attack.name, status: r.status }).toEqual({ attack: attack.name, status: 422 });
      expect(r.json.error.message).toMatch(
        new RegExp(`^base/kustomization\\.yaml: generators\\[\\]\\.ConfigMapGenerator\\.${attack.field} entry `),
      );
      expect(gitLog(remote.dir)).toEqual(log);
    }
    expect(listeners.http.connections).toBe(0);
  });

  it('create: the run fails naming the file; no setting of the service anywhere data goes', async () => {
    const ids: string[] = [];
    for (const attack of attacks()) {
      const remote = fleetWithBase(attack.edit, attack.files);
      const r = await api(
        svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody(`leak-${ids.length}`, remote.url, cert.certPem),
      );
      expect(r.status).toBe(202);
      ids.push(r.json.id);
      const run = await untilTerminal(svc.base, r.json.id);
      expect(run.status).toBe('failed');
      const events = await api(svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}/events`);
      const failed = events.json.items.find((e: any) => e.type === 'StepFailed');
      // The infra pass does not build base/, but it rehearses the full pass, which does: nothing is pushed.
      expect(failed.data.step).toBe('infra-pass');
      expect(failed.data.reason).toMatch(
        /^refused before the infra pass writes anything, as the full pass that follows it would be: base\/kustomization\.yaml: generators\[\]\.ConfigMapGenerator\./,
      );
      const pushed = gitLog(remote.dir).map((line) => line.split(' ').slice(1).join(' '));
      expect(pushed).toEqual(['base with a generator of its own', 'seed']);
    }
    expect(listeners.http.connections).toBe(0);

    const answers: Record<string, string> = {};
    for (const id of ids)
      for (const path of ['', '/events', '/logs'])
        answers[`GET ${id}${path}`] = (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}${path}`)).text;
    const places: Record<string, string> = {
      ...(await dataPlaces(nats.url, db.url)),
      ...answers,
      'service log': svc.output,
    };
    expect(places['stream SCAFFOLD_EVENTS']).toContain(ids[0]);
    expect(hitsIn(places, [API_KEY, REGISTRY_PASSWORD, CANARY, 'TENANT_CONTENT_CANARY'])).toEqual([]);
  });
});
