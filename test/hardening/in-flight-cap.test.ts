import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const { start } = closedAfterEach();
const leaving = new AbortController();
// Registered after the servers' hook, so it runs before it: the held clients leave first.
afterEach(() => leaving.abort());

/** POSTs one query; the status and body, or 'no answer' when none came within 3 s. */
async function post(
  url: string,
  id: string,
  signal = AbortSignal.timeout(3_000),
  headers: Record<string, string> = {},
) {
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` }),
      signal,
    });
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text, ms: Date.now() - started };
  } catch {
    return { status: 'no answer', ms: Date.now() - started };
  }
}

describe('requests in flight in one process', () => {
  it('past HTTP_MAX_IN_FLIGHT, a request gets 503 at once instead of waiting with the others in memory', async () => {
    // Never answers: every admitted request stays in flight until its client leaves.
    const { upstream, facade } = await start(() => undefined, {
      HTTP_MAX_IN_FLIGHT: '4',
      HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL: '4',
      PIM_CACHE: 'false',
    });
    const held = ['A', 'B', 'C', 'D'].map((id) => post(facade.url, id, leaving.signal));
    await expect.poll(() => upstream.requests.length).toBe(4);

    const refused = await post(facade.url, 'E');
    expect(refused).toMatchObject({ status: 503, retryAfter: '1' });
    expect(refused.ms).toBeLessThan(1_000);
    expect(JSON.parse((refused as { text: string }).text)).toEqual({
      errors: [{ message: expect.stringMatching(/busy/), extensions: { code: 'OVERLOADED' } }],
    });
    // Probes are never refused for load, nor the metrics of a main port that serves them, wanted most right then.
    expect((await facade.get('/health')).status).toBe(200);
    expect((await facade.get('/metrics')).status).toBe(200);
    expect(upstream.requests).toHaveLength(4);

    leaving.abort();
    await Promise.all(held);
    // Once the server has seen them leave, a request is admitted again (and waits on the PIM).
    await expect.poll(async () => (await post(facade.url, 'F', AbortSignal.timeout(500))).status).toBe('no answer');
    expect(upstream.requests.some((r) => r.url.includes('/F/'))).toBe(true);
  });

  // First come, first served, one caller holding HTTP_MAX_IN_FLIGHT requests (its own upstream share full, its
  // requests waiting out their budget) left every other caller a 503 at the door, where the fair queue never saw it.
  it('keeps a quarter of HTTP_MAX_IN_FLIGHT for other credentials than the one holding the rest', async () => {
    // Ids starting `known` are answered (each key is seen accepted once); the others hang.
    const { upstream, facade } = await start(
      (req, res) => void (req.url?.includes('/known') && res.writeHead(200).end('{"status":200,"data":[]}')),
      { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false' },
    );
    const leave = new AbortController();
    onTestFinished(() => leave.abort());
    const busy = { 'x-api-key': 'busy-caller-key' };
    const otherKey = { 'x-api-key': 'other-caller-key' };
    for (const key of [busy, otherKey])
      expect(await post(facade.url, 'known', undefined, key)).toMatchObject({ status: 200 });
    upstream.reset();
    const held = ['A', 'B', 'C', 'D', 'E', 'F'].map((id) => post(facade.url, id, leave.signal, busy));
    await expect.poll(() => upstream.requests.length).toBe(6);
    // Three quarters of 8: the busy caller's seventh is refused at the door.
    expect(await post(facade.url, 'G', undefined, busy)).toMatchObject({ status: 503, retryAfter: '1' });
    const other = post(facade.url, 'H', leave.signal, otherKey);
    await expect.poll(() => upstream.requests.some((r) => r.url.includes('/H/'))).toBe(true);
    leave.abort();
    await Promise.all([...held, other]);
  });

  // The door counts by the credential the PIM sees: an empty X-API-KEY goes upstream as the server's key, like no
  // key at all, so it must not open a share of its own beside the callers that send none.
  it('counts a request by the credential its upstream calls carry', async () => {
    const { upstream, facade } = await start(
      (req, res) => void (req.url?.includes('/known') && res.writeHead(200).end('{"status":200,"data":[]}')),
      { HTTP_MAX_IN_FLIGHT: '8', PIM_API_KEY: 'the-server-key', PIM_CACHE: 'false' },
    );
    const leave = new AbortController();
    onTestFinished(() => leave.abort());
    // The server key is seen accepted, so it is a share of its own.
    expect(await post(facade.url, 'known')).toMatchObject({ status: 200 });
    upstream.reset();
    const held = ['A', 'B', 'C', 'D', 'E', 'F'].map((id) => post(facade.url, id, leave.signal));
    await expect.poll(() => upstream.requests.length).toBe(6);
    expect(await post(facade.url, 'G', undefined, { 'x-api-key': '' })).toMatchObject({ status: 503 });
    leave.abort();
    await Promise.all(held);
  });
});
