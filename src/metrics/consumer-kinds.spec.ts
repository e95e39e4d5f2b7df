import type { ConsumerState } from '#libs/event-store';
import { consumerKind, figuresByKind, OTHER_CONSUMERS } from './consumer-kinds';

const state = (name: string, lag: number, pending: number, redelivered = 0): ConsumerState => ({
  name,
  lag,
  pending,
  redelivered,
  ackPending: 0,
  ackFloorSeq: 0,
});

describe('the consumer label', () => {
  it("keeps the service's own durables by name", () => {
    for (const name of ['projector', 'job-launcher', 'step-infra-pass', 'step-full-pass'])
      expect(consumerKind(name)).toBe(name);
  });

  it("counts a per-run consumer under its step's durable, and anything else as other", () => {
    expect(consumerKind('step-infra-pass-run-0b9e6f1c-4f7e-4a4e-9a57-0d4c2f1a6b11')).toBe('step-infra-pass');
    expect(consumerKind('step-nothing-run-1')).toBe(OTHER_CONSUMERS);
    expect(consumerKind('someone-elses')).toBe(OTHER_CONSUMERS);
  });

  it('takes the furthest behind and sums pending and redelivered under each label value', () => {
    const figures = figuresByKind([
      state('step-infra-pass-run-a', 3, 1, 1),
      state('step-infra-pass-run-b', 7, 2, 0),
      state('projector', 0, 0),
      state('x', 4, 5, 2),
      state('y', 9, 1, 1),
    ]);
    expect(Object.fromEntries(figures)).toEqual({
      'step-infra-pass': { lag: 7, pending: 3, redelivered: 1 },
      projector: { lag: 0, pending: 0, redelivered: 0 },
      other: { lag: 9, pending: 6, redelivered: 3 },
    });
  });
});
