import { registerHooks } from 'node:module';

/*
 * KubeConfig without the generated API. @kubernetes/client-node 2.x's config.js (KubeConfig: kubeconfig files, the
 * in-cluster service account, exec plugins, OIDC, client certificates, proxies) imports two names from
 * ./gen/index.js, and that module loads every generated API and model of Kubernetes: about 50 MiB of a process's
 * resident memory for a service that sends ten kinds of request (kube-api.ts). A resolve hook points that one
 * import of config.js at a module that re-exports the two names from the generated files defining them, so the
 * process loads the authentication and none of the models. Only config.js's import is redirected: anything else
 * that loads the package's index still gets all of it. The hook acts in plain Node only (jest resolves modules
 * itself and loads the whole package); kube-config.spec.ts checks that the names below are every name config.js
 * imports from ./gen/index.js, so an upgrade of the package that needs another fails that test, not a process.
 */

/** Each name config.js imports from ./gen/index.js, and the file under dist/gen/ that exports it. */
export const GEN_NAMES_OF_CONFIG: Readonly<Record<string, string>> = {
  createConfiguration: 'configuration.js',
  ServerConfiguration: 'servers.js',
};

const CONFIG_MODULE = '/@kubernetes/client-node/dist/config.js';
const GEN_INDEX = './gen/index.js';

/** The module config.js gets for ./gen/index.js (a data: URL: absolute imports of the package's own files only). */
export function slimGenUrl(configUrl: string): string {
  const source = Object.entries(GEN_NAMES_OF_CONFIG)
    .map(([name, file]) => `export { ${name} } from ${JSON.stringify(new URL(`./gen/${file}`, configUrl).href)};`)
    .join('\n');
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

let registered = false;

/**
 * Registers the resolve hook once per process; it must run before config.js is first loaded. Where module hooks
 * are refused (jest's sandbox throws) config.js loads the whole generated client: the same KubeConfig, more memory
 * (kube-footprint.spec.ts runs the built code in plain Node and fails if the models are loaded there).
 */
function registerSlimGen(): void {
  if (registered) return;
  registered = true;
  try {
    registerHooks({
      resolve(specifier, context, nextResolve) {
        if (specifier === GEN_INDEX && context.parentURL?.endsWith(CONFIG_MODULE))
          return { url: slimGenUrl(context.parentURL), format: 'module', shortCircuit: true };
        return nextResolve(specifier, context);
      },
    });
  } catch {
    // jest: see above.
  }
}

registerSlimGen();
// Loaded after the hook is in place (an import statement would be hoisted above it).
const config =
  require('@kubernetes/client-node/dist/config.js') as typeof import('@kubernetes/client-node/dist/config.js');

export const KubeConfig = config.KubeConfig;
export type KubeConfig = import('@kubernetes/client-node/dist/config.js').KubeConfig;
