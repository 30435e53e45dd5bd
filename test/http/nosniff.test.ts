import { rawExchange } from '../helpers/raw-http.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// OWASP REST Security / ASVS V14.4.4: every API answer carries `X-Content-Type-Options: nosniff`, so a browser never
// second-guesses its declared type. The GraphQL endpoint reflects attacker text (a literal from the query string) into
// its JSON error, unescaped `<script>`, reachable by a plain cross-site GET / navigation; nothing on any answer of the
// façade (Yoga's, the server's own refusals, node:http's) says nosniff.
let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url, { NODE_ENV: 'production', CORS_ORIGINS: 'https://shop.example' });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const payload = '<script>alert(document.domain)</script>';
const reflecting = `/graphql?query=${encodeURIComponent(
  `{ classificationGroup(classificationId: "x", classificationGroupId: "y", levels: "${payload}") }`,
)}`;

describe('X-Content-Type-Options: nosniff on API answers', () => {
  it('on a GraphQL answer that reflects attacker text from a cross-site GET', async () => {
    const answer = await facade.get(reflecting, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    // The reflection is real: the browser gets attacker markup inside the body.
    expect(answer.text).toContain(payload);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("on the server's own refusals (404)", async () => {
    const answer = await facade.get('/nope');
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("on node:http's refusals answered on the socket (400 not HTTP)", async () => {
    const answer = await rawExchange(facade.port, 'GET /graphql HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.split('\r\n\r\n')[0]!.toLowerCase()).toContain('x-content-type-options: nosniff');
  });
});
