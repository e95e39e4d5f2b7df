import { ApiClient, ApiFailure, type Caller } from './api.js';
import { auditView } from './audit-view.js';
import { h, show } from './dom.js';
import { runView } from './run-view.js';
import { runsView } from './runs-view.js';
import { session } from './session.js';
import { errorBox, problemText } from './widgets.js';

/**
 * The console's entry: sign-in, then a route per fragment (#/runs, #/runs/<id>, #/audit). Each
 * route gets an AbortSignal that ends its live work (the run page's stream) when the reader leaves.
 */
const top = document.getElementById('top') as HTMLElement;
const root = document.getElementById('app') as HTMLElement;
let leave = new AbortController();

function signInForm(message: string | null) {
  const key = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', required: '', spellcheck: 'false' });
  const form = h(
    'form',
    { id: 'sign-in', class: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'The API key is kept for this tab only and sent to the API in its X-Api-Key header.'),
    h('label', { for: 'api-key' }, 'API key '),
    key,
    h('button', { type: 'submit' }, 'Sign in'),
    message ? h('p', { class: 'error', role: 'alert' }, message) : null,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void signIn(key.value.trim());
  });
  show(top);
  show(root, form);
  key.focus();
}

async function signIn(key: string) {
  try {
    const caller = await new ApiClient(key).whoami();
    session.signIn(key);
    // A new fragment routes through hashchange; the same one is routed here.
    if (!location.hash.startsWith('#/')) location.hash = '#/runs';
    else await route(key, caller);
  } catch (e) {
    signInForm(e instanceof ApiFailure && e.status === 401 ? 'This key is not accepted.' : problemText(e));
  }
}

function topBar(caller: Caller) {
  const signOut = h('button', { type: 'button', id: 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', () => {
    session.signOut();
    leave.abort();
    signInForm(null);
  });
  show(
    top,
    h('span', { class: 'brand' }, 'GitOps Scaffolder'),
    h('nav', {}, h('a', { href: '#/runs' }, 'Runs'), h('a', { href: '#/audit' }, 'Audit')),
    h('span', { id: 'who', class: 'who' }, `${caller.name} (${caller.role})`),
    signOut,
  );
}

async function route(key: string, caller: Caller) {
  leave.abort();
  leave = new AbortController();
  topBar(caller);
  const api = new ApiClient(key);
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  const runPage = /^\/runs\/([^/]+)$/.exec(path);
  if (runPage) return runView(root, api, decodeURIComponent(runPage[1]), leave.signal);
  if (path === '/audit') return auditView(root, api, params);
  return runsView(root, api, caller, params);
}

/** On load and on every change of the fragment: the signed-in key's page, or the sign-in form. */
async function start() {
  const key = session.key();
  if (!key) return signInForm(null);
  try {
    await route(key, await new ApiClient(key).whoami());
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) {
      session.signOut();
      return signInForm('This key is no longer accepted.');
    }
    show(root, errorBox(e));
  }
}

window.addEventListener('hashchange', () => void start());
void start();
