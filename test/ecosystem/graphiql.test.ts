import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// Debian's chromium package (installed by .ci/run); never a downloaded browser.
const executablePath = '/usr/bin/chromium';
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
let server: Facade;
let browser: Browser;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  server = await startFacade(upstream.url);
  browser = await chromium.launch({ executablePath, args });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await upstream?.close();
});

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
    // Run straight after a switch, the bundle reuses the old tab's operation name; a click refreshes it.
    await editor.click();
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => response.innerText(), { timeout: 30_000 }).toMatch(answer);
    expect(upstream.requests.some((r) => r.url.includes(path))).toBe(true);
  }
  expect(foreign).toEqual([]);
}, 90_000);

it('renders a page that names no third-party origin, favicon included', async () => {
  const page = await fetch(server.url, { headers: { accept: 'text/html' } });
  const html = await page.text();
  expect(html).toContain('/graphiql-assets/yoga-graphiql.umd.js');
  expect(html).toContain('<link rel=icon href="data:,">');
  expect(html).not.toMatch(/https?:\/\//);
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
