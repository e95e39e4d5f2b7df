import { dataSchemas, durableNameFor, EventDraft, RUN_PLANS, stepNames, triggerTable } from '#libs/events';
import { SCAFFOLD_V1 } from '#libs/events/scaffold-v1-plan';
import { handlersFor, HandlersFor, STEP_HANDLERS } from '#libs/steps';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig, stalledRunMs } from '../../src/config/config';
import { progressLine } from '../../src/ctl/run-text';
import { eventSummary } from '../../src/console/ui/format';
import { fluxReadyWait } from './flux-ready-wait/handler';
import { SCAFFOLD_V2 } from './scaffold-v2';

const API_KEY = 'test-api-key-0123456789abcdef';

/** deploy/nats/render.mjs's server-config form with these step durables (an ES module: run by node itself). */
const conf = (stepDurables: string[]) =>
  execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { conf } from ${JSON.stringify(join(__dirname, '../../deploy/nats/render.mjs'))};
       process.stdout.write(conf(${JSON.stringify(stepDurables)}));`,
    ],
    { encoding: 'utf8' },
  );

/** A plan's new step needs a handler: the compiler refuses the registry without it. */
// @ts-expect-error flux-ready-wait, a step of SCAFFOLD_V2, has no handler here
export const WITHOUT_ITS_HANDLER: HandlersFor<typeof SCAFFOLD_V2> = { ...STEP_HANDLERS };
/** With it, the registry compiles. */
export const WITH_ITS_HANDLER: HandlersFor<typeof SCAFFOLD_V2> = { ...STEP_HANDLERS, 'flux-ready-wait': fluxReadyWait };

describe('a run plan with one more step: everything that follows from the plan changes by itself', () => {
  it('the current scaffold plan is version 1, in the order the run has always gone', () => {
    expect(RUN_PLANS.scaffold).toBe(SCAFFOLD_V1);
    expect(stepNames([SCAFFOLD_V1])).toEqual(['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass']);
  });

  it('its triggers: the new step starts on the certificate (or, on SOPS runs, the infrastructure), the full pass on the new step', () => {
    expect(triggerTable(SCAFFOLD_V1)['full-pass']).toEqual([{ type: 'InfraPushed' }, { type: 'CertFetched' }]);
    expect(triggerTable(SCAFFOLD_V2)['flux-ready-wait']).toEqual([{ type: 'InfraPushed' }, { type: 'CertFetched' }]);
    expect(triggerTable(SCAFFOLD_V2)['full-pass']).toEqual([{ type: 'StepCompleted', step: 'flux-ready-wait' }]);
  });

  it('its handler: a process keeping both plans runs one processor per step, the new one included; none without it', () => {
    expect(handlersFor([SCAFFOLD_V1, SCAFFOLD_V2], WITH_ITS_HANDLER).map((h) => h.step)).toEqual([
      'infra-pass',
      'sealed-secrets-wait',
      'cert-fetch',
      'full-pass',
      'flux-ready-wait',
    ]);
    expect(() => handlersFor([SCAFFOLD_V2], STEP_HANDLERS)).toThrow('run plan step flux-ready-wait has no handler');
  });

  it('the rendered NATS permissions: ops may not create the new step durable either', () => {
    const before = conf(stepNames([SCAFFOLD_V1]).map(durableNameFor));
    const after = conf(stepNames([SCAFFOLD_V1, SCAFFOLD_V2]).map(durableNameFor));
    expect(before).not.toContain('step-flux-ready-wait');
    expect(after).toContain('"$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS.step-flux-ready-wait"');
    expect(after).toContain('"$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS.step-flux-ready-wait.>"');
  });

  it('the step enums of the event schemas (and so of both API documents)', () => {
    const enumOf = (steps: string[]) => (dataSchemas(steps).StepFailed as any).properties.step.enum;
    expect(enumOf(stepNames([SCAFFOLD_V1]))).not.toContain('flux-ready-wait');
    expect(enumOf(stepNames([SCAFFOLD_V1, SCAFFOLD_V2]))).toContain('flux-ready-wait');
  });

  it("the stall check's timing: the new step's five-minute progress cadence makes the run's longest silence longer", () => {
    const settings = {
      STEP_TIMEOUT_SECONDS: 120,
      EXECUTOR: 'local',
      JOB_ACTIVE_DEADLINE_SECONDS: 3600,
      SEALED_SECRETS_POLL_MAX_MS: 15_000,
      ACK_WAIT_SECONDS: 30,
    };
    // 120 s step timeout, 60 s + 15 s + 30 s the sealed-secrets wait's silence, 300 s + 15 s + 30 s the new wait's.
    expect(stalledRunMs(settings, [SCAFFOLD_V1])).toBe(120_000 + 60_000 + 30_000);
    expect(stalledRunMs(settings, [SCAFFOLD_V1, SCAFFOLD_V2])).toBe(345_000 + 60_000 + 30_000);
    expect(loadConfig({ API_KEY }).stalledRunMs).toBe(stalledRunMs(loadConfigEnvDefaults(), [SCAFFOLD_V1]));
  });

  it("the texts: the terminal and the console say the new step's result by its name, with nothing added for it", () => {
    const done = {
      type: 'StepCompleted',
      data: { step: 'flux-ready-wait', summary: 'Kustomization infrastructure Ready at 1a2b3c4d5e6f' },
    } as unknown as EventDraft;
    const said = 'flux-ready-wait done: Kustomization infrastructure Ready at 1a2b3c4d5e6f';
    const received = {
      ...done,
      seq: 1,
      id: 'x',
      schema_version: 1,
      time: '2026-01-01T10:00:41.000Z',
      causation_id: null,
    } as any;
    expect(progressLine(received)).toBe(`10:00:41  StepCompleted           ${said}`);
    expect(eventSummary(received)).toBe(said);
  });
});

/** The defaults the configuration reads for the stall check. */
function loadConfigEnvDefaults() {
  const c = loadConfig({ API_KEY });
  return {
    STEP_TIMEOUT_SECONDS: c.steps.stepTimeoutMs / 1000,
    EXECUTOR: 'local',
    JOB_ACTIVE_DEADLINE_SECONDS: 0,
    SEALED_SECRETS_POLL_MAX_MS: c.steps.pollMaxMs,
    ACK_WAIT_SECONDS: c.steps.ackWaitMs / 1000,
  };
}
