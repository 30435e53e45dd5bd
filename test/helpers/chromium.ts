import { chromium, type Browser } from 'playwright-core';
import { requireProgram } from './programs.ts';

// Headless, and nothing of its own on the network (no updates, sync or first-run pages): only what a test asks for.
const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** A Chromium from the machine (PATH or CHROMIUM_PATH), never a downloaded browser. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: requireProgram('chromium'), args });
