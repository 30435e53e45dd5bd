import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { launchChromium } from '../helpers/chromium.ts';

let upstream: DemoUpstream;
let server: Facade;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  server = await startFacade(upstream.url);
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

// A Chromium from the machine (PATH or CHROMIUM_PATH), never a downloaded browser.
describe('GraphiQL in Chromium', { tags: ['chromium'] }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it('opens GraphiQL at /graphql, runs the first example against the demo catalog and shows its data', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // Everything GraphiQL needs must come from our own server: anything else is recorded and refused.
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(server.origin) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    // Whatever the page's Content-Security-Policy blocks (an inline script it does not name, a worker) is recorded.
    await page.addInitScript(() => {
      const blocked: string[] = [];
      Object.assign(window, { blocked });
      document.addEventListener('securitypolicyviolation', (e) =>
        blocked.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    await page.goto(server.url);
    await expect.poll(() => page.title(), { timeout: 30_000 }).toBe('PIM catalog GraphQL');

    // The example tab explains the X-API-KEY slot and has its header editor ready.
    const editor = page.locator('.graphiql-query-editor');
    await editor.waitFor({ timeout: 30_000 });
    await expect.poll(() => editor.innerText(), { timeout: 30_000 }).toMatch(/X-API-KEY/);

    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect.poll(() => response.innerText(), { timeout: 30_000 }).toMatch(/A789-BC-2015/);
    expect(await response.innerText()).toMatch(/"status":\s+200/);

    mkdirSync(new URL('../../artifacts/', import.meta.url), { recursive: true });
    await page.screenshot({ path: new URL('../../artifacts/graphiql.png', import.meta.url).pathname });
    // The header slot is there, empty, ready for a key.
    await page.getByText('Headers', { exact: true }).click();
    await expect
      .poll(() => page.locator('.graphiql-editor-tool').innerText(), { timeout: 30_000 })
      .toMatch(/"X-API-KEY":\s+""/);
    // The query went through the façade to the demo upstream.
    expect(upstream.requests.some((r) => r.url.includes('/catalogs/MACHINERY/products/search'))).toBe(true);

    // Every other example tab opens and runs. Keyboard activation: the bundled tab reordering
    // swallows the first pointer click on another tab in headless Chromium (see docs/deploying.md).
    for (const [name, answer, path] of [
      ['ClassificationGroup', /"classificationGroupId":\s"MC-050000"/, '/classifications/ECLASS-DEMO/groups/MC-050000'],
      ['ClassificationGroups', /"total_items":\s+42/, '/classifications/ECLASS-DEMO/groups?'],
    ] as const) {
      await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 30_000 }).toBe(name);
      await expect
        .poll(() => editor.innerText(), { timeout: 30_000 })
        // Monaco renders spaces as no-break spaces, which \s matches.
        .toMatch(new RegExp(`query\\s${name}\\(`));
      await execute(page, answer);
      expect(upstream.requests.some((r) => r.url.includes(path))).toBe(true);
    }
    expect(foreign).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { blocked: string[] }).blocked)).toEqual([]);
  }, 90_000);

  it('keeps one X-API-KEY for every tab, restores the tabs on reload, and stores no key unless asked', async () => {
    const { page, close } = await openOwnGraphiQL(browser);
    try {
      // The key, entered once in the first tab, goes with its run ...
      await setHeaders(page, '{"X-API-KEY": "key-one"}');
      expect(await run(page, /A789-BC-2015/)).toEqual(['key-one']);
      // ... with a preset tab's run ...
      await openTab(page, 'ClassificationGroups');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['key-one']);
      // ... there still once another header is typed beside an empty key (that edit dropped the key before) ...
      await setHeaders(page, '{"X-API-KEY": "", "Accept-Language": "de"}');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['key-one']);
      // ... and with a new tab's.
      await page.locator('.graphiql-tab-add').click();
      await expect.poll(() => page.locator('.graphiql-tab-button').count()).toBe(4);
      await page.locator('.graphiql-query-editor').click();
      await page.keyboard.insertText('{ classificationGroups(classificationId: "ECLASS-DEMO", pageSize: 2) }');
      expect(await run(page, /"per_page":\s+2/)).toEqual(['key-one']);
      // Erased where it was typed, the key goes with no tab any more.
      await openTab(page, 'CatalogProducts');
      await setHeaders(page, '{"X-API-KEY": ""}');
      await openTab(page, 'ClassificationGroups');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['']);

      // A reload brings back the same tabs, no duplicate, on the tab that was open.
      await openTab(page, 'ClassificationGroup');
      const tabs = await page.locator('.graphiql-tab-button').allInnerTexts();
      // GraphiQL stores the tabs half a second after a change; a reload before then reopens the last stored.
      const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('graphiql:tabState')!).activeTabIndex);
      await expect.poll(stored).toBe(1);
      await page.reload();
      await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
      await expect.poll(() => page.locator('.graphiql-tab-button').allInnerTexts(), { timeout: 30_000 }).toEqual(tabs);
      expect(await page.locator('.graphiql-tab-active').innerText()).toBe('ClassificationGroup');

      // The key was never written to the browser's storage.
      expect(await storage(page)).not.toContain('key-one');
      // Asked to persist headers (GraphiQL's settings), it keeps the key there across a reload.
      await setHeaders(page, '{"X-API-KEY": "key-two"}');
      await page.locator('[data-value="settings"]').click();
      await page.locator('#enable-persist-headers').click();
      await page.keyboard.press('Escape');
      // Stored with the tab it was typed in: GraphiQL stores the tabs apart from the headers editor's text, and a reload
      // before the tabs were stored reopened that tab without it.
      await expect
        .poll(() => page.evaluate(() => localStorage.getItem('graphiql:tabState') ?? ''))
        .toContain('key-two');
      await page.reload();
      await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
      await openTab(page, 'ClassificationGroups');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['key-two']);
      expect(await page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(tabs);
    } finally {
      await close();
    }
  }, 120_000);

  // With headers persisted, the key is stored with the tab it was typed in: after a reload on another (preset) tab,
  // runs from the tabs whose own key is empty went out without it.
  it('with headers persisted, a reload on another tab keeps the key for the tabs whose own is empty', async () => {
    const { page, close } = await openOwnGraphiQL(browser);
    try {
      await page.locator('[data-value="settings"]').click();
      await page.locator('#enable-persist-headers').click();
      await page.keyboard.press('Escape');

      await setHeaders(page, '{"X-API-KEY": "key-p"}');
      expect(await run(page, /A789-BC-2015/)).toEqual(['key-p']);
      await openTab(page, 'ClassificationGroups');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['key-p']);
      const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('graphiql:tabState')!).activeTabIndex);
      await expect.poll(stored).toBe(2);
      expect(await storage(page)).toContain('key-p');

      await page.reload();
      await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
      await expect
        .poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 30_000 })
        .toBe('ClassificationGroups');
      expect(await run(page, /"total_items":\s+42/)).toEqual(['key-p']);
    } finally {
      await close();
    }
  }, 120_000);
});

it('renders a page that names no third-party origin, favicon included', async () => {
  const page = await fetch(server.url, { headers: { accept: 'text/html' } });
  const html = await page.text();
  expect(html).toContain('/graphiql-assets/yoga-graphiql.umd.js');
  expect(html).toContain('<link rel=icon href="data:,">');
  expect(html).not.toMatch(/https?:\/\//);
  // Yoga's page fills in the first of its two title placeholders only; the other showed while the page loaded.
  expect(html).not.toContain('__TITLE__');
});

it('serves only the packaged GraphiQL files, and none of GraphiQL in production', async () => {
  const asset = await fetch(`${server.origin}/graphiql-assets/yoga-graphiql.umd.js`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toBe('text/javascript');
  await asset.arrayBuffer();
  expect((await fetch(`${server.origin}/graphiql-assets/..%2Fpackage.json`)).status).toBe(404);
  expect((await fetch(`${server.origin}/graphiql-assets/%E0%A4%A`)).status).toBe(404);

  const production = await startFacade(upstream.url, { NODE_ENV: 'production' });
  try {
    const page = await fetch(production.url, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toMatch(/graphiql/i);
    const script = await fetch(`${production.origin}/graphiql-assets/yoga-graphiql.umd.js`);
    expect(script.status).toBe(404);
  } finally {
    await production.close();
  }
});

// A page whose every query (introspection's first) is refused as not trusted is no IDE: it is not served.
it('serves none of GraphiQL where only trusted documents run', async () => {
  const manifest = new URL('../../examples/gql/persisted-documents.json', import.meta.url).pathname;
  const trusted = await startFacade(upstream.url, {
    PERSISTED_DOCUMENTS_ONLY: 'true',
    PERSISTED_DOCUMENTS_PATH: manifest,
  });
  try {
    const page = await fetch(trusted.url, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toMatch(/graphiql/i);
    expect((await fetch(`${trusted.origin}/graphiql-assets/yoga-graphiql.umd.js`)).status).toBe(404);
  } finally {
    await trusted.close();
  }
});

/**
 * GraphiQL on a façade of its own without the HTTP cache, so every run reaches the upstream and shows its key, in a
 * browser context of its own (its local storage fresh).
 */
async function openOwnGraphiQL(browser: Browser) {
  const facade = await startFacade(upstream.url, { PIM_CACHE: 'false' });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const close = async () => (await context.close(), await facade.close());
  try {
    const page = await context.newPage();
    await page.goto(facade.url);
    await page.locator('.graphiql-query-editor').waitFor({ timeout: 30_000 });
    return { page, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Replaces the active tab's headers, as a user typing into the Headers editor. */
async function setHeaders(page: Page, headers: string) {
  await page.getByText('Headers', { exact: true }).click();
  const editor = page.locator('.graphiql-editor-tool .graphiql-editor:visible');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(headers);
  // Monaco closes some brackets and quotes as they are typed: what follows the text goes.
  await page.keyboard.press('Shift+Control+End');
  await page.keyboard.press('Delete');
}

/**
 * Switches tabs by keyboard: the bundled tab reordering swallows the first pointer click on
 * another tab in headless Chromium (see docs/deploying.md).
 */
async function openTab(page: Page, name: string) {
  await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 30_000 }).toBe(name);
}

/** Runs the active tab until its answer matches; returns the keys the upstream saw for that run. */
async function run(page: Page, answer: RegExp): Promise<string[]> {
  const before = upstream.requests.length;
  await execute(page, answer, () => upstream.requests.length > before);
  return upstream.requests.slice(before).map((r) => String(r.headers['x-api-key'] ?? ''));
}

/**
 * Runs the active tab until its response matches (and `sent` holds). Right after a switch the bundle's Run reuses
 * the previous tab's operation name (an "Unknown operation" answer, nothing sent upstream); clicking the editor
 * refreshes it, but on a loaded machine not always before the click on Run, so Run is retried.
 */
async function execute(page: Page, answer: RegExp, sent = () => true) {
  for (let attempt = 1; ; attempt++) {
    await page.locator('.graphiql-query-editor').click();
    await page.locator('.graphiql-execute-button').click();
    try {
      await expect.poll(() => page.locator('.graphiql-response').innerText(), { timeout: 10_000 }).toMatch(answer);
      // The tab shows its answer of an earlier run at once: a Run that sent nothing (seen right after a tab switch)
      // is clicked again.
      return await expect.poll(sent, { timeout: 10_000 }).toBe(true);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** Everything the page's origin keeps in localStorage, as one string. */
const storage = (page: Page) => page.evaluate(() => JSON.stringify({ ...localStorage }));
