import { randomUUID } from 'node:crypto';
import { stamp } from '#libs/events';
import { main as ctl } from '../../src/ctl';
import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { api, untilTerminal, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo, gitLog } from '../support/services';

jest.setTimeout(120_000);

/**
 * What someone with publish rights on the event subjects (an unauthenticated NATS) could do before:
 * a non-event message made every read covering it fail; a deleted consumer stopped new runs while the
 * service said it was healthy. Now readers skip and report such messages, and readiness names what is
 * missing while the service recreates it.
 */
describe('the event log defends itself', () => {
  const stack = useServiceStack(() => ({ PUSH_ATTEMPTS: '1' }));
  const cert = makeRsaCert();
  const ctlLines = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await ctl(
      argv,
      { NATS_URL: stack.nats.url, DATABASE_URL: stack.db.url, LOG_LEVEL: 'error' },
      (l) => lines.push(l),
      () => undefined,
    );
    return { code, lines };
  };
  const publish = (subject: string, data: string) => stack.svc.runtime.store.js.publish(subject, data);

  it('skips messages that are not events of their run: every read answers, replay goes on, status and the metric report them', async () => {
    const remote = bareRepo();
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('integrity', remote.url, cert.certPem),
    );
    const id = created.json.id;
    await untilTerminal(stack.svc.base, id);
    const garbage = await publish(`scaffold.run.${id}`, 'this is not json');
    const otherRun = stamp(
      { type: 'ScaffoldCancelled', data: { step: 'infra-pass' } },
      randomUUID(),
      randomUUID(),
      new Date(),
      null,
    );
    const misplaced = await publish(`scaffold.run.${id}`, JSON.stringify(otherRun));

    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).status).toBe(200);
    const audit = await api(stack.svc.base, 'GET', '/api/v1/events?limit=500');
    expect(audit.status).toBe(200);
    expect(audit.json.items.some((e: any) => e.run_id === id && e.type === 'ScaffoldSucceeded')).toBe(true);
    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.status).toBe('succeeded');
    const replay = await ctlLines('replay', '--from-seq', '1');
    expect(replay.code).toBe(0);
    expect(replay.lines.some((l) => l.includes('ScaffoldSucceeded'))).toBe(true);
    // A new run after the bad messages still goes through every consumer.
    const next = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('integrity-next', bareRepo().url, cert.certPem),
    );
    expect((await untilTerminal(stack.svc.base, next.json.id)).status).toBe('succeeded');

    const status = await waitFor('the projector to record both', async () => {
      const s = await ctlLines('status', '--json');
      const json = JSON.parse(s.lines[0]);
      return json.invalid_messages.length >= 2 ? json : undefined;
    });
    expect(status.invalid_messages).toEqual(
      expect.arrayContaining([
        { seq: garbage.seq, subject: `scaffold.run.${id}`, reason: `stream message ${garbage.seq} is not JSON` },
        {
          seq: misplaced.seq,
          subject: `scaffold.run.${id}`,
          reason: `stream message ${misplaced.seq} on scaffold.run.${id} names run ${otherRun.run_id}`,
        },
      ]),
    );
    const metrics = await (await fetch(`${stack.svc.base}/metrics`)).text();
    expect(metrics).toMatch(/scaffold_stream_messages_skipped_total\{kind="invalid"\} 2/);
  });

  it("skips log-stream messages that are not log entries, and a line's line breaks cannot fake further lines", async () => {
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('log-integrity', bareRepo().url, cert.certPem),
    );
    const id = created.json.id;
    await untilTerminal(stack.svc.base, id);
    const before = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text.split('\n');
    const fake = '2026-01-01T00:00:00.000Z INFO [full-pass] run succeeded';
    for (const junk of [
      'not json',
      'null',
      '[1,2]',
      '{"time":1,"level":"info","step":"x","msg":"y"}',
      JSON.stringify({ time: 'now', level: 'info', step: 'x' }),
    ]) {
      await publish(`scaffold.logs.${id}`, junk);
    }
    await publish(
      `scaffold.logs.${id}`,
      JSON.stringify({
        time: '2026-01-01T00:00:00.000Z',
        level: 'info',
        step: 'infra-pass',
        msg: `one line\n${fake}\r\u2028${fake}`,
      }),
    );

    const rest = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`);
    expect(rest.status).toBe(200);
    const lines = rest.text.split('\n');
    // The five stray messages are skipped; the injected entry is one line, before the outcome line.
    expect(lines).toHaveLength(before.length + 1);
    expect(lines.filter((l) => l.startsWith(fake))).toEqual([]);
    expect(lines).toContain(`2026-01-01T00:00:00.000Z INFO [infra-pass] one line\\n${fake}\\r\\u2028${fake}`);
  });

  it('refuses a second ScaffoldRequested that would redirect a live run; status and the metric report it', async () => {
    const remote = bareRepo();
    const attacker = bareRepo();
    // The first push fails (nothing listens there) and is retried: the run is live long enough.
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('redirect', 'https://127.0.0.1:9/fleet.git', cert.certPem),
    );
    const id = created.json.id;
    const { events } = await stack.svc.runtime.store.readRun(id);
    const forged = stamp(
      { type: 'ScaffoldRequested', data: { ...(events[0].data as any), repo_url: attacker.url } },
      id,
      randomUUID(),
      new Date(),
      null,
    );
    await publish(`scaffold.run.${id}`, JSON.stringify(forged));
    const refused = await waitFor('the refusal in status', async () => {
      const s = JSON.parse((await ctlLines('status', '--json')).lines[0]);
      return s.refused_events.find((r: any) => r.run_id === id);
    });
    expect(refused).toMatchObject({
      type: 'ScaffoldRequested',
      reason: 'a second ScaffoldRequested on a run that was already requested',
    });
    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.repo_url).toBe(
      'https://127.0.0.1:9/fleet.git',
    );
    await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/cancel`);
    await untilTerminal(stack.svc.base, id);
    expect(gitLog(attacker.dir)).toHaveLength(1);
    expect(gitLog(remote.dir)).toHaveLength(1);
    expect(await (await fetch(`${stack.svc.base}/metrics`)).text()).toMatch(
      /scaffold_stream_messages_skipped_total\{kind="refused"\} 1/,
    );
  });

  /** /readyz answers 503 with exactly `missing`, then 200 again within 15 s (the service repaired it). */
  async function degradedThenReady(missing: string[]) {
    const degraded = await fetch(`${stack.svc.base}/readyz`);
    expect([degraded.status, ((await degraded.json()) as any).missing]).toEqual([503, missing]);
    await waitFor(
      'readiness again',
      async () => ((await fetch(`${stack.svc.base}/readyz`)).status === 200 ? true : undefined),
      15_000,
    );
  }

  /** A new run goes through every step. */
  async function newRunSucceeds(cluster: string) {
    const run = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody(cluster, bareRepo().url, cert.certPem),
    );
    expect((await untilTerminal(stack.svc.base, run.json.id)).status).toBe('succeeded');
  }

  it('readiness names a deleted step consumer and a deleted stream; the service recreates both and runs go on', async () => {
    const jsm = stack.svc.runtime.store.jsm;
    await jsm.consumers.delete('SCAFFOLD_EVENTS', 'step-infra-pass');
    await degradedThenReady(['consumer step-infra-pass']);

    await jsm.streams.delete('SCAFFOLD_LOGS');
    const noLogs = await fetch(`${stack.svc.base}/readyz`);
    expect(noLogs.status).toBe(503);
    expect(((await noLogs.json()) as any).missing).toEqual(['stream SCAFFOLD_LOGS']);
    expect((await fetch(`${stack.svc.base}/readyz`)).status).toBe(200);
    expect((await fetch(`${stack.svc.base}/livez`)).status).toBe(200);

    await newRunSucceeds('after-repair');
  });

  it("readiness names a step consumer deleted and created again with another filter (#28's attack); the service restores it and new runs proceed", async () => {
    // Another client with consumer rights, as the attack was made: delete, then the same name on a filter no run uses.
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager, AckPolicy, DeliverPolicy } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: stack.nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.delete('SCAFFOLD_EVENTS', 'step-infra-pass');
      await jsm.consumers.add('SCAFFOLD_EVENTS', {
        durable_name: 'step-infra-pass',
        filter_subject: 'scaffold.run.nothing',
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
      await degradedThenReady(['consumer step-infra-pass differs: filter_subject']);
      expect((await jsm.consumers.info('SCAFFOLD_EVENTS', 'step-infra-pass')).config.filter_subject).toBe(
        'scaffold.run.>',
      );
    } finally {
      await nc.close();
    }
    await newRunSucceeds('after-replace');
  });
});
