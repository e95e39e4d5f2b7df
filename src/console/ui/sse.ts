/** One Server-Sent Event as the API sends it: `id` (stream sequence), `event` (type), `data` (JSON). */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** The most one event may hold before the stream is given up (the API's events are a few kB). */
const MAX_EVENT_CHARS = 1_000_000;

/**
 * An incremental parser of text/event-stream (the WHATWG rules the console needs: `\n`, `\r\n` or
 * `\r` line ends, several `data:` lines joined, comments ignored), fed chunk by chunk.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private id: string | null = null;
  private event = '';

  constructor(private readonly onMessage: (m: SseMessage) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_EVENT_CHARS) throw new Error('an event larger than the console reads');
    let end: RegExpExecArray | null;
    while ((end = /\r\n|\r|\n/.exec(this.buffer)) !== null) {
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for the next chunk.
      if (end[0] === '\r' && end.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end.index);
      this.buffer = this.buffer.slice(end.index + end[0].length);
      this.line(line);
    }
  }

  /** The stream ended: a line end held back as a possible half of \r\n is one after all (an unfinished event is dropped). */
  end(): void {
    if (this.buffer.endsWith('\r')) this.line(this.buffer.slice(0, -1));
    this.buffer = '';
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
  }

  private dispatch(): void {
    if (this.data.length > 0)
      this.onMessage({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.event = '';
  }
}
