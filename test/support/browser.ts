import { chromium, type Browser } from 'playwright-core';
import { requiredTool } from './tools';

/**
 * A headless Debian Chromium (scripts/ensure-services.sh links it into .tools/bin; CHROMIUM_PATH names
 * another), which playwright-core drives, downloading nothing; without its sandbox only as root, where
 * Chromium refuses to start with it.
 */
export function launchChromium(): Promise<Browser> {
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? requiredTool('chromium'),
    headless: true,
    args: asRoot ? ['--no-sandbox'] : [],
    timeout: 60_000,
  });
}
