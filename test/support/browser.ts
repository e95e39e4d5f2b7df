import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (scripts/ensure-services.sh installs it); playwright-core drives it and downloads nothing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A headless Chromium; without its sandbox only as root, where Chromium refuses to start with it. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/ensure-services.sh (apt-get install chromium)`);
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: asRoot ? ['--no-sandbox'] : [],
    timeout: 60_000,
  });
}
