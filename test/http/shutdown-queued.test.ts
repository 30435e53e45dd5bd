import { createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach, startFacade } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from '../stale/reads.ts';

const { start } = closedAfterEach();
// The last second of it is when queued calls are let go: a loaded machine has time to answer them.
const GRACE_MS = 4_000;
const query = (id: string) => JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` });

// docs/operations.md, Shutdown: a request still waiting for a connection to the PIM when the grace is about to end
// gets an answer with BUDGET_EXCEEDED, not the reset that ends whatever still runs. Its budget (GRAPHQL_BUDGET_MS,
// 20 s by default) outlasts the grace (SHUTDOWN_GRACE_MS, 10 s), so its client could not tell the cut from a crash.
it('answers a request still queued for the PIM before the grace ends, with BUDGET_EXCEEDED', async () => {
  const { upstream, facade } = await start(faults.slowHeaders(20_000), {
    PIM_MAX_CONCURRENCY: '1',
    PIM_RETRIES: '0',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const post = (id: string) =>
    fetch(`${facade.url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query(id) });
  // A holds the only connection to the PIM for longer than the grace; B waits in the queue behind it.
  const a = post('A').then(
    async (response) =>
      (await response.json()).errors?.[0]?.extensions?.code === 'BUDGET_EXCEEDED' ? response.status : 0,
    () => 'cut',
  );
  await expect.poll(() => upstream.requests.length).toBe(1);
  const b = post('B');
  // B reached the façade and queued (its call never goes out while A holds the slot).
  await expect.poll(async () => (await facade.app.metrics()).body).toMatch(/^pim_upstream_calls_queued 1$/m);
  const closed = facade.close();
  const answered = await b;
  expect(answered.status).toBe(200);
  const body = await answered.json();
  expect(body.errors[0].extensions.code).toBe('BUDGET_EXCEEDED');
  expect(upstream.requests).toHaveLength(1);
  await closed;
  // A's call was still at the PIM: it ends for A then too, unread (a reset before).
  expect(await a).toBe(200);
});

// The same for a request waiting out the PIM's Retry-After between two attempts: the failure it waits to retry is
// its answer (or a kept copy's, where stale serving has one), not the reset.
it('answers a request waiting to retry before the grace ends, with the failure it waited on', async () => {
  const { upstream, facade } = await start(faults.status(503, '', { 'retry-after': '10' }), {
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const answer = fetch(`${facade.url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: query('A'),
  }).then(
    async (response) => ({ status: response.status, body: await response.json() }),
    () => 'cut',
  );
  await expect.poll(() => upstream.requests.length).toBe(1);
  const closed = facade.close();
  expect(await answer).toMatchObject({
    status: 200,
    body: { errors: [{ extensions: { code: 'UPSTREAM_ERROR' } }] },
  });
  // The retry it waited for is not sent.
  expect(upstream.requests).toHaveLength(1);
  await closed;
});

// A call still at the PIM as the grace is about to end ends for its request too: where the PIM answered the same
// call before, that kept copy is the answer, marked stale, as in any outage.
it('answers a request whose call is still at the PIM with its kept copy, before the grace ends', async () => {
  let calls = 0;
  const { upstream, facade } = await start((req, res) => (++calls === 1 ? answerFor('v1')(req, res) : undefined), {
    PIM_RETRIES: '0',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const first = await facade.post('{ classificationGroups(classificationId: "A") }');
  expect(first.body.data.classificationGroups.data[0].version).toBe('v1');
  const answer = facade.post('{ classificationGroups(classificationId: "A") }').catch(() => 'cut');
  await expect.poll(() => upstream.requests.length).toBe(2);
  const closed = facade.close();
  expect(await answer).toMatchObject({
    status: 200,
    body: { data: { classificationGroups: { data: [{ version: 'v1' }] } }, extensions: { stale: [{}] } },
  });
  await closed;
});

// A request that joined another's call at the PIM is answered with it, and asks nothing again after the shutdown's
// stop: it asked again (its deadline later than the first's), sent a new call, and was cut with it.
it('answers a request that joined a call at the PIM, and sends nothing after the stop', async () => {
  const { upstream, facade } = await start(faults.slowHeaders(20_000), {
    PIM_RETRIES: '0',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const post = () =>
    facade.post('{ classificationGroups(classificationId: "A") }').then(
      (answer) => answer.body.errors?.[0]?.extensions?.code,
      () => 'cut',
    );
  const first = post();
  await expect.poll(() => upstream.requests.length).toBe(1);
  const joined = post();
  // Time to reach the façade and join the call under way (no figure tells when it has).
  await sleep(300);
  const closed = facade.close();
  expect(await Promise.all([first, joined])).toEqual(['BUDGET_EXCEEDED', 'BUDGET_EXCEEDED']);
  await closed;
  expect(upstream.requests).toHaveLength(1);
});

// A call still connecting (a PIM whose TLS handshake hangs) had no start yet to end: its request waited for it.
it('answers a request whose call is still connecting to the PIM, before the grace ends', async () => {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = silent.address() as AddressInfo;
    const facade = await startFacade(`https://127.0.0.1:${port}`, {
      PIM_RETRIES: '0',
      PIM_CONNECT_TIMEOUT_MS: '30000',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
    });
    const answer = facade.post('{ classificationGroups(classificationId: "A") }').catch(() => 'cut');
    await expect.poll(() => sockets.size).toBeGreaterThan(0);
    const closed = facade.close();
    expect(await answer).toMatchObject({
      status: 200,
      body: { errors: [{ extensions: { code: 'BUDGET_EXCEEDED' } }] },
    });
    await closed;
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

// What the PIM is already answering is read to its end, as before: only a call it has not answered yet is let go.
it('reads an answer already coming when the grace is about to end', async () => {
  const { upstream, facade } = await start(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{"status":200,"meta":{},"data":[');
      // Its end comes after the stop (a second before the grace ends), before the grace ends.
      const timer = setTimeout(() => res.end('"whole"]}'), GRACE_MS - 500);
      res.once('close', () => clearTimeout(timer));
    },
    { PIM_RETRIES: '0', SHUTDOWN_GRACE_MS: String(GRACE_MS) },
  );
  const answer = facade.post('{ classificationGroups(classificationId: "A") }').catch(() => 'cut');
  await expect.poll(() => upstream.requests.length).toBe(1);
  const closed = facade.close();
  expect(await answer).toMatchObject({ status: 200, body: { data: { classificationGroups: { data: ['whole'] } } } });
  await closed;
});
