import { allSteps, deployRunPlan } from '#libs/events';
import { asyncApiDocument } from '../../src/scaffolds/asyncapi';
import { openApiDocument } from '../../src/scaffolds/openapi';
import { Registry } from 'prom-client';
import type { Metrics } from '../../src/metrics/metrics';
import { RunGauges } from '../../src/projection/run-gauges';
import type { RunReadModel } from '../../src/projection/run-read-model';
import { SCAFFOLD_V2 } from './scaffold-v2';

const NEW_STEP = 'flux-ready-wait';

/** Every step enum of the OpenAPI document: the run's step, each event's step, the runner's reports and log lines. */
function openApiStepEnums(doc: any): Record<string, unknown[]> {
  const { Run, Event } = doc.components.schemas;
  // The event's data is one of the data schemas; StepFailed's is the one with an attempt.
  const stepFailed = Event.properties.data.oneOf.find((s: any) => s.properties?.attempt);
  const commands = doc.paths['/api/runner/v1/runs/{id}/commands'].post.requestBody.content['application/json'].schema;
  const logs = doc.paths['/api/runner/v1/runs/{id}/logs'].post.requestBody.content['application/json'].schema;
  return {
    'Run.step': Run.properties.step.enum,
    'Event StepFailed step': stepFailed.properties.step.enum,
    'runner commands step': commands.properties.command.oneOf[0].properties.step.enum,
    'runner logs step': logs.properties.entries.items.properties.step.enum,
  };
}

/** The step enums of the AsyncAPI document: each event message's data, and the shared Run schema. */
function asyncApiStepEnums(doc: any): Record<string, unknown[]> {
  const messages = doc.channels.runEvents.messages;
  return {
    'StepFailed message': messages.StepFailed.payload.properties.data.properties.step.enum,
    'StepProgress message': messages.StepProgress.payload.properties.data.properties.step.enum,
    'StepCompleted message': messages.StepCompleted.payload.properties.data.properties.step.enum,
    'Run.step': doc.components.schemas.Run.properties.step.enum,
  };
}

/** The step labels the active-run gauges report at a scrape, with no run active. */
async function gaugeSteps(): Promise<string[]> {
  const metrics = { registry: new Registry() } as Metrics;
  new RunGauges(metrics, { activeByStep: async () => [] } as unknown as RunReadModel);
  const gauge = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'scaffold_active_runs')!;
  return gauge.values.map((v) => String(v.labels.step));
}

/**
 * Issue #50: the step enums of both API documents and the active-run gauges follow from the kept run plans as they
 * are when asked, not as they were when their modules were loaded: a deploy of the test-only plan v2 adds its step.
 */
describe('the documents and the gauges follow the kept run plans', () => {
  it('gain the step of a plan deployed after they were loaded, and keep the old ones', async () => {
    const before = { openapi: openApiStepEnums(openApiDocument()), asyncapi: asyncApiStepEnums(asyncApiDocument()) };
    for (const list of [...Object.values(before.openapi), ...Object.values(before.asyncapi)]) {
      expect(list).toEqual(expect.arrayContaining(['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass']));
      expect(list).not.toContain(NEW_STEP);
    }
    expect(await gaugeSteps()).not.toContain(NEW_STEP);

    deployRunPlan(SCAFFOLD_V2);
    expect(allSteps()).toContain(NEW_STEP);

    const after = { openapi: openApiStepEnums(openApiDocument()), asyncapi: asyncApiStepEnums(asyncApiDocument()) };
    for (const [where, list] of [...Object.entries(after.openapi), ...Object.entries(after.asyncapi)])
      expect({ where, list }).toEqual({ where, list: expect.arrayContaining([...allSteps()]) });
    expect(after.openapi['Run.step']).toEqual([...allSteps(), null]);
    expect(await gaugeSteps()).toEqual(expect.arrayContaining([NEW_STEP, 'full-pass', 'none']));
  });
});
