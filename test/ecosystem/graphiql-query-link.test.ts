// @module-tag chromium
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { launchChromium } from '../helpers/chromium.ts';

let upstream: DemoUpstream;
let server: Facade;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  server = await startFacade(upstream.url, { PIM_CACHE: 'false' });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

// GraphiQL writes the edited query into the address bar (`?query=`), so its URL is a link to that query; Yoga's page
// opens a link's query. The façade's page opened its presets (or the stored tab) instead.
describe('a GraphiQL link with ?query=', { tags: ['chromium'] }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  const linked = '{ classificationGroups(classificationId: "ECLASS-DEMO", pageSize: 2) }';
  const link = () => `${server.url}?query=${encodeURIComponent(linked)}`;
  const text = (s: string) => s.replace(/\u00a0/g, ' ');

  it('opens the linked query on a first visit', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(link());
      const editor = page.locator('.graphiql-query-editor');
      await editor.waitFor({ timeout: 30_000 });
      await expect.poll(async () => text(await editor.innerText()), { timeout: 30_000 }).toContain('pageSize: 2');
    } finally {
      await context.close();
    }
  }, 90_000);

  it('opens the linked query where tabs are stored, and keeps those tabs', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(server.url);
      await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
      await expect
        .poll(() => page.evaluate(() => localStorage.getItem('graphiql:tabState')), { timeout: 30_000 })
        .not.toBeNull();
      const tabs = await page.locator('.graphiql-tab-button').allInnerTexts();
      await page.goto(link());
      const editor = page.locator('.graphiql-query-editor');
      await editor.waitFor({ timeout: 30_000 });
      await expect.poll(async () => text(await editor.innerText()), { timeout: 30_000 }).toContain('pageSize: 2');
      // The stored tabs are still there, the link's query in one more.
      await expect.poll(() => page.locator('.graphiql-tab-button').count(), { timeout: 30_000 }).toBe(tabs.length + 1);
      // A reload (the link still in the address bar, its tab open and stored) adds none.
      const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('graphiql:tabState')!).activeTabIndex);
      await expect.poll(stored, { timeout: 30_000 }).toBe(tabs.length);
      await page.reload();
      await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
      await expect.poll(async () => text(await editor.innerText()), { timeout: 30_000 }).toContain('pageSize: 2');
      expect(await page.locator('.graphiql-tab-button').count()).toBe(tabs.length + 1);
    } finally {
      await context.close();
    }
  }, 90_000);
});
