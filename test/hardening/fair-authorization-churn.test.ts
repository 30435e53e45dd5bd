import type { ServerResponse } from 'node:http';
import { expect, it, vi } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

// One credential cannot starve the others (HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL at the door,
// PIM_MAX_CONCURRENCY_PER_CREDENTIAL at the PIM). Without PIM_API_KEY a caller's share was keyed on every forwarded
// header together (X-API-KEY and Authorization, the default PIM_FORWARD_HEADERS), while the PIM authenticates the
// X-API-KEY (UPSTREAM.md). One caller with one real key and a made-up Authorization per request was as many
// credentials as values it made up, each accepted by the PIM's first answer, each with a whole share of its own.

const { start } = closedAfterEach();

const CHURNER = 'churning-real-key-0002';
const OTHER = 'other-real-key-0001';
const ask = (url: string, headers: Record<string, string>, id = 'x') =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` }),
  });
const churned = (i: number) => ({ 'x-api-key': CHURNER, authorization: `Bearer made-up-${i}` });

it('one key with a new Authorization per request holds no more door slots than its share', async () => {
  const { facade } = await start(echo, { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false' });
  // Both keys are real: the PIM answered each (and each Authorization of the churner's, as it checks the key only).
  expect((await ask(facade.url, { 'x-api-key': OTHER })).status).toBe(200);
  for (let i = 0; i < 9; i++) expect((await ask(facade.url, churned(i))).status).toBe(200);
  const sockets = await Promise.all(
    Array.from({ length: 8 }, (_, i) => heldPost(facade.port, CHURNER, { authorization: `Bearer made-up-${i}` })),
  );
  try {
    // Held once one more of the churner's is refused: its share is full (or, unfixed, the whole door).
    await vi.waitFor(async () => expect((await ask(facade.url, churned(8))).status).toBe(503));
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ask(facade.url, { 'x-api-key': OTHER })).status);
    expect(statuses).toEqual([200, 200, 200]);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});

it('one key with a new Authorization per call holds no more upstream connections than its share', async () => {
  // The PIM holds the churner's slow calls and answers the rest at once.
  const held = new Set<ServerResponse>();
  let ending = false;
  const handler: UpstreamHandler = (req, res) => {
    if (!req.url?.includes('/slow-')) return echo(req, res);
    if (ending) return void res.destroy();
    held.add(res);
    res.once('close', () => held.delete(res));
  };
  const { facade } = await start(handler, {
    PIM_MAX_CONCURRENCY: '4',
    PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '3',
    PIM_TIMEOUT_MS: '8000',
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
  });
  expect((await ask(facade.url, { 'x-api-key': OTHER })).status).toBe(200);
  for (let i = 0; i < 4; i++) expect((await ask(facade.url, churned(i))).status).toBe(200);
  const slow = Array.from({ length: 4 }, (_, i) => ask(facade.url, churned(i), `slow-${i}`).catch(() => undefined));
  try {
    // Three on the wire and the fourth queued behind its share, or (unfixed) all four on the wire.
    await vi.waitFor(async () => {
      const queued = /^pim_upstream_calls_queued (\d+)$/m.exec((await facade.app.metrics()).body)?.[1];
      expect(held.size + Number(queued)).toBe(4);
    });
    // The other key gets the connection the churner's share leaves free: answered while every slow call still waits
    // (unfixed, it waited for one of them to time out).
    expect((await ask(facade.url, { 'x-api-key': OTHER }, 'other')).status).toBe(200);
    expect(held.size).toBe(3);
  } finally {
    ending = true;
    for (const res of held) res.destroy();
    await Promise.all(slow);
  }
}, 30_000);
