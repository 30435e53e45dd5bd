import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

const installed: string = createRequire(import.meta.url)('@graphql-yoga/graphiql/package.json').version;

// The page (no-store) names GraphiQL's files at the same URLs whatever version is installed, and those answers said
// `public, max-age=86400`: after an upgrade a browser (or a CDN) ran the new page against the old bundle, its key
// script against yesterday's GraphiQL, for a day. A URL kept for a day must name what it holds; any other is revalidated.
it('serves no GraphiQL file a browser may reuse unchecked under a URL that outlives its version', async () => {
  const html = await (await fetch(fixture.facade.url, { headers: { accept: 'text/html' } })).text();
  const urls = [...html.matchAll(/\/graphiql-assets\/[^\s>"]+/g)].map(([url]) => url);
  expect(urls.length).toBeGreaterThanOrEqual(5);
  for (const url of urls) {
    const answer = await fetch(`${fixture.facade.origin}${url}`);
    await answer.arrayBuffer();
    expect(answer.status, url).toBe(200);
    const cacheControl = answer.headers.get('cache-control') ?? '';
    const reused = /max-age=[1-9]/.test(cacheControl) && !/no-cache/.test(cacheControl);
    if (reused) expect(url, `${url} is kept (${cacheControl}) without naming ${installed}`).toContain(installed);
  }
  // The same file asked for without its version is checked with the server each time.
  const bare = await fetch(`${fixture.facade.origin}/graphiql-assets/graphiql.css`);
  await bare.arrayBuffer();
  expect(bare.headers.get('cache-control')).toMatch(/no-cache/);
});
