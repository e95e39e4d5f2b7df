import { SseMessage, SseParser } from '../../src/console/ui/sse';
import { eventSummary, span } from '../../src/console/ui/format';

function parse(chunks: string[]): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = new SseParser((m) => out.push(m));
  for (const c of chunks) parser.push(c);
  parser.end();
  return out;
}

describe("the console's SSE parser (what it reads from fetch)", () => {
  const stream =
    'id: 7\nevent: InfraPushed\ndata: {"seq":7}\n\n: keep-alive\n\nid: 8\nevent: FullPushed\ndata: {"seq":8}\n\n';
  const expected = [
    { id: '7', event: 'InfraPushed', data: '{"seq":7}' },
    { id: '8', event: 'FullPushed', data: '{"seq":8}' },
  ];

  it('reads events whole, whatever the chunk boundaries, and ignores comments', () => {
    expect(parse([stream])).toEqual(expected);
    for (let cut = 1; cut < stream.length; cut++)
      expect(parse([stream.slice(0, cut), stream.slice(cut)])).toEqual(expected);
    expect(parse([...stream])).toEqual(expected);
  });

  it('takes \\r\\n and \\r line ends, also split between chunks, and joins several data lines', () => {
    const crlf = stream.replace(/\n/g, '\r\n');
    for (let cut = 1; cut < crlf.length; cut++) expect(parse([crlf.slice(0, cut), crlf.slice(cut)])).toEqual(expected);
    expect(parse([stream.replace(/\n/g, '\r')])).toEqual(expected);
    expect(parse(['data: a\ndata: b\n\n'])).toEqual([{ id: null, event: 'message', data: 'a\nb' }]);
  });

  it('gives up on an event larger than it reads instead of growing without bound', () => {
    const parser = new SseParser(() => undefined);
    expect(() => parser.push(`data: ${'x'.repeat(1_000_001)}`)).toThrow(/larger than the console reads/);
  });
});

describe("the console's wording", () => {
  it('gives spans in the units that matter', () => {
    expect([0, 4200, 59_000, 185_000, 7_800_000, 3 * 86_400_000 + 3_600_000].map(span)).toEqual([
      '0.0 s',
      '4.2 s',
      '59 s',
      '3 min 5 s',
      '2 h 10 min',
      '3 d 1 h',
    ]);
    expect(span(-1)).toBe('—');
  });

  it('summarises events from names and references only', () => {
    const e = (type: string, data: Record<string, unknown>) => ({
      seq: 1,
      id: 'x',
      type,
      schema_version: 1,
      time: '',
      causation_id: null,
      data,
    });
    expect(eventSummary(e('FullPushed', { commit: 'a'.repeat(40), objects_sealed: 3 }))).toBe(
      'full pass pushed aaaaaaaaaaaa (3 objects sealed)',
    );
    expect(
      eventSummary(e('StepFailed', { step: 'full-pass', attempt: 2, reason: 'push refused', will_retry: true })),
    ).toBe('full-pass failed (attempt 2): push refused; will retry');
    expect(eventSummary(e('SomethingNew', {}))).toBe('');
  });
});
