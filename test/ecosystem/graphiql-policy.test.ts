import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemo } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// GraphiQL is where a user types a PIM key (docs/integration.md, GraphiQL). Its page runs only its own scripts, talks
// to this server alone, and no other site may frame it (clickjacking the key). graphiql.test.ts runs it in Chromium
// with this policy and finds nothing blocked.
let demo: Awaited<ReturnType<typeof startDemo>>;
let server: Facade;
beforeAll(async () => {
  demo = await startDemo();
  server = await startFacade(demo.url);
});
afterAll(async () => {
  await server?.close();
  await demo?.close();
});

const policyOf = async () => {
  const page = await fetch(server.url, { headers: { accept: 'text/html' } });
  const html = await page.text();
  return {
    html,
    policy: page.headers.get('content-security-policy') ?? '',
    referrer: page.headers.get('referrer-policy'),
  };
};

it('cannot be framed by another site, and sends no Referer', async () => {
  const { policy, referrer } = await policyOf();
  expect(policy).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
  expect(referrer).toBe('no-referrer');
});

it("runs only the server's scripts and its own inline ones, and connects to the server alone", async () => {
  const { html, policy } = await policyOf();
  const scripts = /(^|; )script-src ([^;]*)/.exec(policy)?.[2] ?? '';
  expect(scripts.split(' ').filter((source) => !source.startsWith("'sha256-"))).toEqual(["'self'"]);
  // One hash per inline script of the page (Yoga's start, the key's handling).
  expect(scripts.split(' ').length - 1).toBe([...html.matchAll(/<script>/g)].length);
  expect(policy).toMatch(/(^|; )connect-src 'self'(;|$)/);
  expect(policy).toMatch(/(^|; )default-src 'self'(;|$)/);
});

it('leaves the answers to GraphQL requests without the page policy', async () => {
  const answer = await server.post('{ __typename }');
  expect(answer.headers.get('content-security-policy')).toBeNull();
});
