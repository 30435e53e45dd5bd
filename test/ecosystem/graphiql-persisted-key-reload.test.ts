// @module-tag chromium
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { requireProgram } from '../helpers/programs.ts';

// README/integration.md: a key typed once "goes with every tab whose own is empty", and reaches local storage "only
// with Persist headers turned on". With it on, the key is stored with the tab it was typed in; after a reload on
// another (preset) tab, runs from the empty tabs went out without it, the PIM saw no key.
const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

let upstream: DemoUpstream;
let facade: Facade;
let browser: Browser;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  facade = await startFacade(upstream.url, { PIM_CACHE: 'false' });
  browser = await chromium.launch({ executablePath: requireProgram('chromium'), args });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await facade?.close();
  await upstream?.close();
});

it('with headers persisted, a reload on another tab keeps the key for the tabs whose own is empty', async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(facade.url);
    await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
    await page.locator('[data-value="settings"]').click();
    await page.locator('#enable-persist-headers').click();
    await page.keyboard.press('Escape');

    await setHeaders(page, '{"X-API-KEY": "key-p"}');
    expect(await run(page, /A789-BC-2015/)).toEqual(['key-p']);
    await openTab(page, 'ClassificationGroups');
    expect(await run(page, /"total_items":\s+42/)).toEqual(['key-p']);
    const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('graphiql:tabState')!).activeTabIndex);
    await expect.poll(stored).toBe(2);
    expect(await page.evaluate(() => localStorage.getItem('graphiql:tabState'))).toContain('key-p');

    await page.reload();
    await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 30_000 })
      .toBe('ClassificationGroups');
    expect(await run(page, /"total_items":\s+42/)).toEqual(['key-p']);
  } finally {
    await context.close();
  }
}, 120_000);

async function setHeaders(page: Page, headers: string) {
  await page.getByText('Headers', { exact: true }).click();
  const editor = page.locator('.graphiql-editor-tool .graphiql-editor:visible');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(headers);
  await page.keyboard.press('Shift+Control+End');
  await page.keyboard.press('Delete');
}

async function openTab(page: Page, name: string) {
  await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 30_000 }).toBe(name);
}

async function run(page: Page, answer: RegExp): Promise<string[]> {
  const before = upstream.requests.length;
  for (let attempt = 1; ; attempt++) {
    await page.locator('.graphiql-query-editor').click();
    await page.locator('.graphiql-execute-button').click();
    try {
      await expect.poll(() => page.locator('.graphiql-response').innerText(), { timeout: 10_000 }).toMatch(answer);
      break;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
  await expect.poll(() => upstream.requests.length, { timeout: 30_000 }).toBeGreaterThan(before);
  return upstream.requests.slice(before).map((r) => String(r.headers['x-api-key'] ?? ''));
}
