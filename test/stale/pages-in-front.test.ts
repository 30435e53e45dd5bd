import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

const servers = closedAfterEach();
const A = { 'x-api-key': 'key-of-a-123' };
const read = '{ p: catalogProducts(catalogId: "X") }';
const html = { 'content-type': 'text/html' };

// The PIM's error body is its envelope, `{status, meta, error}` (UPSTREAM.md). A WAF's or auth proxy's page, a
// gateway's own JSON (Kong's "no Route matched") or an empty body is no word of the PIM's on the key or the resource:
// on main each ended the kept copy (here and in Redis), and the next real outage had nothing to stand in.
it.each([
  ['a WAF 403 page', 403, '<html><body>Access denied</body></html>', html, 'FORBIDDEN'],
  ['an auth proxy 401 page', 401, '<html>Sign in</html>', html, 'UNAUTHENTICATED'],
  ['a gateway 404 of its own JSON', 404, '{"message":"no Route matched with those values"}', {}, 'stale'],
  ['an empty 410', 410, '', {}, 'stale'],
])('%s keeps the copy for the next outage', async (_kind, status, body, headers, during) => {
  const { upstream, facade } = await servers.start(answerFor('v1'), {
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  expect((await facade.post(read, {}, A)).body.data.p.data[0].version).toBe('v1');
  upstream.respond(faults.status(status, body, headers));
  const answer = (await facade.post(read, {}, A)).body;
  expect(answer.extensions?.stale ? 'stale' : answer.errors[0].extensions.code).toBe(during);
  upstream.respond(faults.status(503));
  const outage = (await facade.post(read, {}, A)).body;
  expect(outage.extensions.stale).toHaveLength(1);
  expect(outage.data.p.data[0].version).toBe('v1');
});
