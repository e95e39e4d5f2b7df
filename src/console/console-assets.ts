import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import express, { type Request, type Response, type NextFunction, Router } from 'express';

/** Where the service serves its console. */
export const CONSOLE_PATH = '/ui';

/**
 * Headers on every answer under /ui. The console's own scripts and styles only (no inline script or
 * style, no eval), its calls to this origin only, never inside a frame, no MIME sniffing, no referrer
 * (a run id in the fragment never leaves), and no caching of a page a signed-in tab showed.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  'cache-control': 'no-cache',
};

/**
 * The built console: dist/console, where `npm run build` compiles the browser code (src/console/ui/tsconfig.json:
 * ES modules under the repository's own paths, src/console/ui/main.js and the event sentences it shares with
 * scaffolderctl, src/common/texts/) and copies index.html and console.css; found from this file compiled
 * (dist/src/console) or, when the service runs from its TypeScript sources (the in-process tests), from src/console.
 */
export function consoleAssetsDir(): string {
  const built = resolve(__dirname, '../../console');
  return existsSync(join(built, 'src/console/ui/main.js')) ? built : resolve(__dirname, '../../dist/console');
}

function withConsoleHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set(CONSOLE_HEADERS);
  next();
}

/**
 * `/ui` itself is sent to `/ui/`: the page loads its scripts and styles by relative paths, which resolve
 * under `/ui/` only (static serving answers the bare mount path 404, having been told not to redirect).
 */
function withTrailingSlash(req: Request, res: Response, next: NextFunction): void {
  const url = new URL(req.originalUrl, 'http://console');
  if (url.pathname !== CONSOLE_PATH) return next();
  res.redirect(301, `${CONSOLE_PATH}/${url.search}`);
}

/**
 * The read-only console's static files: public like /metrics, since they hold no data; everything the
 * console shows comes from the API with the signed-in key, under the API's own checks.
 */
export function consoleRouter(dir: string = consoleAssetsDir()): Router {
  const router = Router();
  router.use(withConsoleHeaders);
  router.use(withTrailingSlash);
  router.use(express.static(dir, { index: 'index.html', dotfiles: 'ignore', redirect: false, fallthrough: true }));
  router.use((_req: Request, res: Response) => {
    res.status(404).type('text/plain').send('not found');
  });
  return router;
}
