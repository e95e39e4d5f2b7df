/**
 * The delivery port (see port/forge-port.ts). It lives in port/ so that the adapters (github/, gitlab/, gitea/)
 * and the settings at this level can all import it without a folder importing one that imports it.
 */
export * from './port/forge-port';
