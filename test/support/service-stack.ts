import { RunningService, startService } from './service';
import { TestDatabase, TestNats } from './services';

export interface ServiceStack {
  nats: TestNats;
  db: TestDatabase;
  /** Replaceable: a test may stop it and start another on the same NATS and database. */
  svc: RunningService;
  /** Starts another service on the same NATS and database. */
  start(env?: Record<string, string>): Promise<RunningService>;
}

/**
 * A suite's own nats-server and database with the service in-process: started before the suite's
 * tests, stopped after them. `env` adds service settings (read when the suite starts).
 */
export function useServiceStack(env: () => Record<string, string> = () => ({})): ServiceStack {
  const stack = {
    start(extra: Record<string, string> = {}) {
      return startService({ NATS_URL: stack.nats.url, DATABASE_URL: stack.db.url, ...extra });
    },
  } as ServiceStack;
  beforeAll(async () => {
    stack.nats = await TestNats.start();
    stack.db = await TestDatabase.create();
    stack.svc = await stack.start(env());
  });
  afterAll(async () => {
    await stack.svc?.stop();
    await stack.nats?.destroy();
    await stack.db?.drop();
  });
  return stack;
}
