import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// The PIM's own verdict on a URL and key (the key revoked, the group deleted) ends the kept copy: on main, the
// next outage served the older 200 to the revoked key, marked stale.
it.each([
  [401, 'UNAUTHENTICATED'],
  [403, 'FORBIDDEN'],
  [404, 'NOT_FOUND'],
])('after a %i, an outage gets the outage error, not the answer before it', async (status, code) => {
  // Each key's own calls, in turn: 200 to both, then the verdict to the first key, then an outage for both.
  const answers = [200, 200, status, 503];
  const { facade } = await servers.start(
    (_req, res, index) => {
      const answer = answers[Math.min(index ?? 0, answers.length - 1)]!;
      res.writeHead(answer, { 'content-type': 'application/json' });
      res.end(answer === 200 ? '{"status":200,"data":[{"id":"G"}]}' : `{"status":${answer},"error":"no"}`);
    },
    { PIM_RETRIES: '0' },
  );
  const read = async (key = 'key-1234567') =>
    (await facade.post('{ classificationGroups(classificationId: "C") }', {}, { 'x-api-key': key })).body;
  expect((await read()).errors).toBeUndefined();
  expect((await read('other-key-89')).errors).toBeUndefined();
  expect((await read()).errors[0].extensions.code).toBe(code);
  const during = await read();
  expect(during.extensions?.stale).toBeUndefined();
  expect(during.data.classificationGroups).toBeNull();
  expect(during.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  // The other key's copy was not the verdict's: it still stands in for the outage.
  const other = await read('other-key-89');
  expect(other.extensions.stale).toHaveLength(1);
  expect(other.data.classificationGroups.data).toEqual([{ id: 'G' }]);
});
