// Headless Chromium for the browser suites: Debian's `chromium` package at /usr/bin/chromium,
// driven by playwright-core (nothing is downloaded). Without it, a suite reports itself
// skipped and says why (.ci/run installs it; the README says how).

import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** Call first in a browser suite's `before`: without Chromium, says so and skips the suite. */
export function skipUnlessChromium(suite: Mocha.Context): void {
  if (fs.existsSync(CHROMIUM)) return;
  console.log(`    skipped: ${CHROMIUM} is absent; install Debian's chromium package (apt-get install -y chromium) to run the browser suite`);
  suite.skip();
}

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, timeout: 30_000 });
