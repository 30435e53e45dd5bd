import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import { afterAll, beforeAll, expect, expectTypeOf, it } from 'vitest';
import { catalogResult, type CatalogNotFound, type ProductRecord } from '../src/types/catalog.ts';
import { startDemoUpstream, type DemoUpstream } from './helpers/demo.ts';
import { config } from './fixtures/typed-client/codegen.ts';
import { loadStorefront } from './fixtures/typed-client/client.ts';
import { startFacade, type Facade } from './helpers/facade.ts';

const fixture = (path: string) => fileURLToPath(new URL(`./fixtures/typed-client/${path}`, import.meta.url));

let upstream: DemoUpstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  facade = await startFacade(upstream.url);
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

it('codegen against the running service gives the committed typed documents', async () => {
  const files = await generate({ ...config, schema: facade.url, silent: true }, false);
  expect(files.length).toBe(3);
  for (const { filename, content } of files) expect(content, filename).toBe(readFileSync(filename, 'utf8'));
});

it('the client compiles with the repo’s TypeScript, the unnarrowed access an error', async () => {
  const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
  const run = promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', fixture('tsconfig.json')]);
  await expect(run).resolves.toMatchObject({ stdout: '' });
}, 60_000);

it('the client gets the demo’s answers, typed', async () => {
  const page = await loadStorefront(facade.url, 'MC-050200');
  expectTypeOf(page.firstProduct).toEqualTypeOf<ProductRecord | undefined>();
  expectTypeOf(page.firstProduct!.productId).toBeString();
  expect(page.productIds).toEqual(['A789-BC-2015', 'M890-OP-2015', 'P234-QW-2015']);
  expect(page.firstProduct).toMatchObject({ productId: 'A789-BC-2015', catalogId: 'MACHINERY' });
  expect(page.totalProducts).toBe(6);
  expect(page.group).toMatchObject({ classificationGroupId: 'MC-050200', fallbackDescShort: 'Mining Excavators' });
  expect(page.subgroupNames.length).toBeGreaterThan(0);
  // urql sent it as a GET: one request per field reached the demo.
  expect(upstream.requests.filter((r) => r.url.includes('MC-050200'))).toHaveLength(2);
});

it('a workspace can import the types by the package subpath', () => {
  expect(import.meta.resolve('pim-graphql-facade/catalog-types')).toMatch(/\/src\/types\/catalog\.ts$/);
});

it('the narrowing helper refuses a value that is not an envelope, and passes null through', () => {
  expect(catalogResult('catalogProducts', null)).toBeNull();
  expect(() => catalogResult('classificationGroups', { data: [] })).toThrow(TypeError);
});

it('the 404 type is the demo’s 404 body', async () => {
  const response = await fetch(`${upstream.url}/pxm/pimapi/v1/catalogs/NOPE/products/search`);
  const body: CatalogNotFound = await response.json();
  expect(body).toEqual({ status: 404, meta: { languageId: null }, error: 'No Products found' });
  const { errors } = (await facade.post('{ catalogProducts(catalogId: "NOPE") }')).body;
  // The façade's message is the service's text, naming the ids asked for.
  expect(errors[0]).toMatchObject({ message: `${body.error}: catalogId "NOPE"`, extensions: { code: 'NOT_FOUND' } });
});
