import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { ApiError, errorBody } from './api-error';
import { callerFor } from './auth';
import type { ScaffoldApi } from './scaffold-api';
import type { Metrics } from '../metrics';

export const NATS_QUEUE = 'gitops-scaffolder';

type Handler = (body: any, caller: string, msg: Msg) => Promise<unknown>;

/**
 * Request/reply on scaffolds.v1.*: plain JSON in and out (no framework envelope, so nats.go
 * Request works), the API key in header X-Api-Key, errors as {"error": ...}; a queue group lets
 * replicas share the subjects. The same ScaffoldApi serves REST.
 */
export class NatsApi {
  private subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly api: ScaffoldApi,
    private readonly keys: Map<string, string>,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {}

  start() {
    const routes: Record<string, Handler> = {
      create: async (b, caller, msg) => (await this.api.create(b, caller, msg.headers?.get('Idempotency-Key') || undefined)).run,
      get: (b) => this.api.get(b?.id),
      list: (b) => this.api.list(b ?? {}),
      logs: async (b) => ({ id: b?.id, log: await this.api.logs(b?.id) }),
      events: (b) => this.api.events(b?.id),
      cancel: (b, caller) => this.api.cancel(b?.id, caller),
      redrive: (b, caller) => this.api.redrive(b?.id, caller),
      'events.all': (b) => this.api.allEvents(b ?? {}),
    };
    for (const [name, handler] of Object.entries(routes)) {
      const sub = this.nc.subscribe(`scaffolds.v1.${name}`, { queue: NATS_QUEUE, callback: (err, msg) => void this.serve(err, msg, handler) });
      this.subs.push(sub);
    }
  }

  private async serve(err: Error | null, msg: Msg, handler: Handler) {
    if (err) return;
    const started = process.hrtime.bigint();
    let reply: unknown;
    let status = 200;
    try {
      const caller = callerFor(this.keys, msg.headers?.get('X-Api-Key') || undefined);
      if (msg.data.length > 1024 * 1024) throw new ApiError(413, 'payload_too_large', 'request body is over 1 MiB');
      let body: unknown = {};
      if (msg.data.length > 0) {
        try {
          body = JSON.parse(msg.string());
        } catch {
          throw new ApiError(400, 'invalid_json', 'body: malformed JSON');
        }
      }
      reply = await handler(body, caller, msg);
    } catch (e) {
      const apiError = e instanceof ApiError ? e : new ApiError(500, 'internal', 'internal error');
      if (!(e instanceof ApiError)) this.logger.error({ err: String(e), subject: msg.subject }, 'NATS API request failed');
      status = apiError.status;
      reply = errorBody(apiError);
    }
    const h = natsHeaders();
    h.set('Status-Code', String(status));
    msg.respond(JSON.stringify(reply), { headers: h });
    this.metrics?.apiLatency.observe({ transport: 'nats', route: msg.subject, status: String(status) }, Number(process.hrtime.bigint() - started) / 1e9);
  }

  stop() {
    for (const s of this.subs) s.unsubscribe();
  }
}
