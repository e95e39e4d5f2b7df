import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { makeRsaCert } from '../support/certs';
import { launchChromium } from '../support/browser';
import { artifactPath, tempDir } from '../support/files';
import { SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { api, API_KEY, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo } from '../support/services';

jest.setTimeout(120_000);

const TEAM_A = 'team-a-key-0123456789abcdef';
const TEAM_B = 'team-b-key-0123456789abcdef';
/** Generous for a busy 2-core machine: every wait below is on a condition, never a fixed time. */
const UI_WAIT = 45_000;

/**
 * A fleet repository whose pushes wait until the test lets them through (a pre-receive hook
 * waiting for a file), so a run stands still after ScaffoldRequested while the page is watched.
 */
function heldRepository() {
  const remote = bareRepo();
  const gate = join(tempDir('gate'), 'open');
  const hook = join(remote.dir, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\ni=0\nwhile [ ! -e '${gate}' ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i+1)); done\ncat >/dev/null\n`,
  );
  chmodSync(hook, 0o755);
  return { ...remote, release: () => writeFileSync(gate, '') };
}

const request = (cluster: string, url: string, certPem: string) => ({
  cluster_name: cluster,
  domain: `${cluster}.example.com`,
  region: 'eu-west-1',
  acme_email: 'ops@example.com',
  repo: { url, branch: 'main' },
  target: { sealing_cert_pem: certPem },
});

async function signIn(page: Page, base: string, key: string, who: string) {
  await page.goto(`${base}/ui/`);
  await page.fill('#api-key', key);
  await page.click('#sign-in button[type=submit]');
  await page.waitForSelector(`#who:text-is("${who}")`, { timeout: UI_WAIT });
}

const timelineTypes = (page: Page) =>
  page.$$eval('#timeline li', (items) => items.map((li) => li.getAttribute('data-type')));

describe('the console (/ui) in Chromium', () => {
  const stack = useServiceStack(() => ({ API_KEYS: `team-a:operator:${TEAM_A},team-b:operator:${TEAM_B}` }));
  const cert = makeRsaCert();
  let browser: Browser;
  /** Held pushes are let through at the end whatever happened, so no step waits out the hook's own limit. */
  const gates: Array<() => void> = [];
  /** What the page reported that it should not have: script errors, refused resources (CSP). */
  const pageProblems: string[] = [];
  /** Every request the pages made, with whether it carried a key in X-Api-Key. */
  const requests: Array<{ url: string; keyHeader: boolean }> = [];

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const release of gates) release();
    await browser?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(UI_WAIT);
    page.on('pageerror', (e) => pageProblems.push(`pageerror: ${e.message}`));
    page.on('request', (r) => requests.push({ url: r.url(), keyHeader: Boolean(r.headers()['x-api-key']) }));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 404/.test(m.text())) pageProblems.push(`console: ${m.text()}`);
    });
    return page;
  }

  it('serves the console with a strict Content-Security-Policy, no framing and no sniffing', async () => {
    for (const path of ['/ui/', '/ui/src/console/ui/main.js', '/ui/console.css', '/ui/missing.js']) {
      const res = await fetch(stack.svc.base + path);
      expect({ path, status: res.status }).toEqual({ path, status: path.includes('missing') ? 404 : 200 });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
    // The bare path is sent to the page itself (its relative script and style paths resolve under /ui/ only).
    const bare = await fetch(`${stack.svc.base}/ui?x=1`, { redirect: 'manual' });
    expect({ status: bare.status, location: bare.headers.get('location') }).toEqual({
      status: 301,
      location: '/ui/?x=1',
    });
    const index = await (await fetch(`${stack.svc.base}/ui/`)).text();
    expect(index).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(index).not.toMatch(/\sstyle=|\son[a-z]+=/i);
  });

  it("shows a run's phases arriving live; another tenant's key sees nothing of it", async () => {
    const remote = heldRepository();
    gates.push(remote.release);
    const page = await newPage();
    await signIn(page, stack.svc.base, TEAM_A, 'team-a (operator)');
    await page.waitForSelector('#runs-empty');

    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      request('console-a', remote.url, cert.certPem),
      {
        'x-api-key': TEAM_A,
      },
    );
    expect(created.status).toBe(202);
    const id = created.json.id;

    await page.goto(`${stack.svc.base}/ui/#/runs/${id}`);
    await page.waitForSelector('#timeline li[data-type="ScaffoldRequested"]');
    await page.waitForSelector('#live[data-state="live"]');
    // The page stays the same document from here on: a reload would drop this mark.
    await page.evaluate(() => ((globalThis as any).consoleTestMark = 'same page'));
    // Pushes are held: nothing past the request can have happened yet.
    expect(await timelineTypes(page)).toEqual(['ScaffoldRequested']);

    remote.release();
    for (const [i, type] of SUCCEEDED_RUN_EVENTS.entries())
      await page.waitForSelector(`#timeline li:nth-child(${i + 1})[data-type="${type}"]`);
    await page.waitForSelector('#live[data-state="ended"]');
    expect(await timelineTypes(page)).toEqual([...SUCCEEDED_RUN_EVENTS]);
    expect(await page.evaluate(() => (globalThis as any).consoleTestMark)).toBe('same page');
    const gaps = await page.$$eval('#timeline li .gap', (g) => g.map((e) => e.textContent));
    expect(gaps[0]).toBe('start');
    for (const gap of gaps.slice(1)) expect(gap).toMatch(/^\+\d/);

    const run = await untilTerminal(stack.svc.base, id);
    expect(run.status).toBe('succeeded');
    await page.waitForSelector('#run-details .status[data-status="succeeded"]');
    expect(await page.$$eval('#commits code.commit', (c) => c.map((e) => e.textContent))).toEqual([
      run.infra_commit,
      run.full_commit,
    ]);
    await page.waitForSelector('#log:has-text("run succeeded")');
    const plan = (
      await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/credential-plan`, undefined, { 'x-api-key': TEAM_A })
    ).json.items;
    expect(plan.length).toBeGreaterThan(0);
    await page.waitForSelector('#plan');
    const classes = [...new Set(plan.map((i: any) => i.class))];
    expect(await page.$$eval('#plan .plan-class', (s) => s.map((e) => e.getAttribute('data-class')))).toEqual(classes);
    expect(await page.textContent('#problems')).toBeTruthy();

    const shot = artifactPath('console-run.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(existsSync(shot)).toBe(true);
    console.log(`console screenshot: ${shot}`);

    // The key stays in this tab's sessionStorage: never in the URL, a cookie or localStorage, and no
    // value of the service's settings (the registry password) reaches the page.
    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: localStorage.length,
      cookie: (globalThis as any).document.cookie,
    }));
    expect(storage).toEqual({ session: [TEAM_A], local: 0, cookie: '' });
    expect(page.url()).not.toContain(TEAM_A);
    // The live timeline came over the SSE route, read with fetch and the key in its header (no key in any URL).
    expect(requests.filter((r) => r.url.includes(TEAM_A))).toEqual([]);
    const streams = requests.filter((r) => r.url === `${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`);
    expect(streams.length).toBeGreaterThan(0);
    expect(streams.every((r) => r.keyHeader)).toBe(true);
    expect(await page.textContent('body')).not.toContain('TestRegistryPassword');

    // The list: this key's run, without an owner column (it sees only its own); filters narrow it.
    await page.goto(`${stack.svc.base}/ui/#/runs`);
    await page.waitForSelector(`tr[data-run-id="${id}"]`);
    expect(await page.$$eval('table.runs th', (t) => t.map((e) => e.textContent))).not.toContain('Owner');
    await page.goto(`${stack.svc.base}/ui/#/runs?status=failed`);
    await page.waitForSelector('#runs-empty');
    await page.goto(`${stack.svc.base}/ui/#/runs?cluster=console-a&status=succeeded`);
    await page.waitForSelector(`tr[data-run-id="${id}"]`);
    await page.goto(`${stack.svc.base}/ui/#/audit`);
    await page.waitForSelector('#audit-body tr[data-type="ScaffoldSucceeded"]');

    // Another tenant: an empty list, "not found" for the run, an audit feed without it.
    await page.click('#sign-out');
    await signIn(page, stack.svc.base, TEAM_B, 'team-b (operator)');
    await page.waitForSelector('#runs-empty');
    await page.goto(`${stack.svc.base}/ui/#/runs/${id}`);
    await page.waitForSelector('#not-found');
    expect(await page.textContent('#not-found')).toBe('Run not found.');
    await page.goto(`${stack.svc.base}/ui/#/audit`);
    await page.waitForSelector('#audit-empty');
    expect(await page.textContent('body')).not.toContain('console-a');

    // An admin sees every run, with its owner.
    await page.click('#sign-out');
    await signIn(page, stack.svc.base, API_KEY, 'default (admin)');
    await page.waitForSelector(`tr[data-run-id="${id}"] td.owner:text-is("team-a")`);

    expect(pageProblems).toEqual([]);
  });

  it('shows a failed run on a 420 px screen: every description on screen, each failure listed once', async () => {
    const remote = bareRepo();
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      { ...request('console-narrow', remote.url, cert.certPem), repo: { url: remote.url, branch: 'no-such-branch' } },
      { 'x-api-key': TEAM_A },
    );
    const run = await untilTerminal(stack.svc.base, created.json.id);
    expect(run.status).toBe('failed');

    const page = await newPage();
    await page.setViewportSize({ width: 420, height: 900 });
    await page.goto(`${stack.svc.base}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.fill('#api-key', TEAM_A);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#who:text-is("team-a (operator)")');
    await page.goto(`${stack.svc.base}/ui/#/runs/${run.id}`);
    await page.waitForSelector('#timeline li[data-type="ScaffoldFailed"]');
    await page.waitForSelector('#problems li');
    await page.waitForSelector('#log:has-text("run failed")');

    const overflowing = await page.$$eval('#timeline .summary, #problems li', (items) =>
      items.filter((e) => e.getBoundingClientRect().right > (globalThis as any).innerWidth).map((e) => e.textContent),
    );
    expect(overflowing).toEqual([]);
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      420,
    );
    const listed = await page.$$eval('#problems li', (items) => items.map((e) => e.textContent));
    expect(listed).toEqual([expect.stringMatching(/^ScaffoldFailed: .*the branch does not exist on the remote/)]);
    await page.screenshot({ path: artifactPath('console-run-420px.png'), fullPage: true });
    expect(pageProblems).toEqual([]);
  });

  it("answers what the console asks under the API's checks: whoami, owner, cluster filter, credential plan", async () => {
    const as = (key: string, path: string) => api(stack.svc.base, 'GET', path, undefined, { 'x-api-key': key });
    expect((await as(TEAM_A, '/api/v1/whoami')).json).toEqual({ name: 'team-a', role: 'operator' });
    expect((await as(API_KEY, '/api/v1/whoami')).json).toEqual({ name: 'default', role: 'admin' });
    expect((await as('wrong-key-0123456789', '/api/v1/whoami')).status).toBe(401);

    const remote = bareRepo();
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', request('api-b', remote.url, cert.certPem), {
      'x-api-key': TEAM_B,
    });
    expect(created.json.owner).toBe('team-b');
    await untilTerminal(stack.svc.base, created.json.id);
    const listed = (key: string, query: string) =>
      as(key, `/api/v1/scaffolds?${query}`).then((r) => r.json.items.map((i: any) => i.id));
    expect(await listed(TEAM_B, 'cluster_name=api-b')).toEqual([created.json.id]);
    expect(await listed(TEAM_B, 'cluster_name=console-a')).toEqual([]);
    expect(await listed(TEAM_A, 'cluster_name=api-b')).toEqual([]);
    expect(await listed(API_KEY, 'cluster_name=api-b&status=succeeded')).toEqual([created.json.id]);
    const bad = await as(TEAM_B, '/api/v1/scaffolds?cluster_name=Not_A_Cluster');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^cluster_name: /);

    const plan = await as(TEAM_B, `/api/v1/scaffolds/${created.json.id}/credential-plan`);
    expect(plan.status).toBe(200);
    for (const item of plan.json.items) expect(Object.keys(item).sort()).toEqual(['class', 'key', 'name', 'namespace']);
    expect(plan.text).not.toContain('TestRegistryPassword');
    expect((await as(TEAM_A, `/api/v1/scaffolds/${created.json.id}/credential-plan`)).status).toBe(404);
    expect((await as(API_KEY, `/api/v1/scaffolds/${created.json.id}/credential-plan`)).json).toEqual(plan.json);
  });

  it('refuses a key the service does not know, and keeps nothing of it', async () => {
    const page = await newPage();
    await page.goto(`${stack.svc.base}/ui/`);
    await page.fill('#api-key', 'not-a-key-of-this-service');
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#sign-in .error:text-is("This key is not accepted.")');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});
