import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const products = '{ catalogProducts(catalogId: "c1", page: 0) }';

// Holds every answer until the test releases it, so the calls are truly concurrent.
function gated(answer: UpstreamHandler = echo) {
  let open = false;
  const held: Array<() => void> = [];
  const handler: UpstreamHandler = (req, res) => (open ? answer(req, res) : held.push(() => answer(req, res)));
  const release = () => {
    open = true;
    held.splice(0).forEach((send) => send());
  };
  return { handler, release };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Requests the façade's server has taken in during the current test.
let arrived = 0;

// Waits for the expected upstream calls and for every request to have reached the server, then gives the
// last of them time to be parsed and join the shared call.
async function until(condition: () => boolean, requests = arrived) {
  for (let i = 0; i < 1000 && !(condition() && arrived >= requests); i++) await sleep(5);
  await sleep(200);
  expect(condition()).toBe(true);
}

describe('coalescing across concurrent GraphQL requests', () => {
  // The cache is off so that only coalescing can explain the counts.
  const fixture = useFacade({ PIM_CACHE: 'false' });
  beforeAll(() => void fixture.facade.server.on('request', () => arrived++));
  beforeEach(() => void (arrived = 0));

  it('sends one upstream call for 20 concurrent identical requests with one credential', async () => {
    const gate = gated();
    fixture.upstream.respond(gate.handler);
    const replies = Array.from({ length: 20 }, () => fixture.facade.post(products, {}, { 'x-api-key': 'k1' }));
    await until(() => fixture.upstream.requests.length === 1, 20);
    gate.release();
    for (const { body } of await Promise.all(replies)) expect(body).toEqual({ data: expect.any(Object) });
    expect(fixture.upstream.requests).toHaveLength(1);
    expect(fixture.upstream.requests[0]!.headers['x-api-key']).toBe('k1');
  });

  it('never shares a call between different credentials', async () => {
    const gate = gated();
    fixture.upstream.respond(gate.handler);
    const keys = ['k1', 'k2', 'k1', 'k2', 'k3'];
    const replies = keys.map((key) => fixture.facade.post(products, {}, { 'x-api-key': key }));
    const bearer = fixture.facade.post(products, {}, { authorization: 'Bearer t1' });
    await until(() => fixture.upstream.requests.length === 4, 6);
    gate.release();
    await Promise.all([...replies, bearer]);
    const seen = fixture.upstream.requests.map((r) => r.headers['x-api-key'] ?? r.headers.authorization).sort();
    expect(seen).toEqual(['Bearer t1', 'k1', 'k2', 'k3']);
  });

  // A 404, which no retry policy repeats, so the count shows the sharing alone.
  it('shares an upstream error with every waiter', async () => {
    const gate = gated((_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No Products found"}'),
    );
    fixture.upstream.respond(gate.handler);
    const replies = Array.from({ length: 5 }, () => fixture.facade.post(products));
    await until(() => fixture.upstream.requests.length === 1, 5);
    gate.release();
    for (const { body } of await Promise.all(replies)) {
      expect(body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('keeps the shared call alive when one client aborts, and answers the others', async () => {
    const gate = gated();
    fixture.upstream.respond(gate.handler);
    const quitter = new AbortController();
    const aborted = Promise.resolve(
      fetch(fixture.facade.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: products }),
        signal: quitter.signal,
      }),
    )
      .then((r) => r.json())
      .catch((error: unknown) => error);
    const stayers = Array.from({ length: 3 }, () => fixture.facade.post(products));
    await until(() => fixture.upstream.requests.length === 1, 4);
    quitter.abort();
    await aborted;
    gate.release();
    for (const { body } of await Promise.all(stayers)) expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('leaves the shared call once every waiter has gone, and closes it unread once the PIM answers', async () => {
    let closed = 0;
    const pim = gated();
    fixture.upstream.respond((req, res) => {
      req.socket.once('close', () => closed++);
      pim.handler(req, res);
    });
    const clients = Array.from({ length: 3 }, () => new AbortController());
    const replies = clients.map((client) =>
      Promise.resolve(
        fetch(fixture.facade.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: products }),
          signal: client.signal,
        }),
      ).catch((error: unknown) => error),
    );
    await until(() => fixture.upstream.requests.length === 1, 3);
    clients[0]!.abort();
    clients[1]!.abort();
    clients[2]!.abort();
    await Promise.all(replies);
    // The PIM still works on it (cancelled-calls.test.ts): the connection stays until it answers, then closes.
    await sleep(100);
    expect(closed).toBe(0);
    pim.release();
    await until(() => closed === 1);
    expect(fixture.upstream.requests).toHaveLength(1);
  });
});
