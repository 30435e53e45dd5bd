import { describe, expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

// Answers of ~700 KB against a 1 MiB process cap: one fits at a time.
const ANSWER_BYTES = 700_000;
const env = { PIM_MAX_INFLIGHT_BYTES: '1048576', PIM_CACHE: 'false', PIM_TIMEOUT_MS: '20000', PIM_RETRIES: '0' };

const servers = closedAfterEach();
const tooLarge = (text: string) => text.match(/UPSTREAM_TOO_LARGE/g)?.length ?? 0;

describe('a body whose declared length does not fit', () => {
  it('is refused at its headers, not after it has been read', async () => {
    let sent: () => void;
    const bigSent = new Promise<void>((resolve) => (sent = resolve));
    const { upstream, facade } = await servers.start((req, res) => {
      if (req.url!.includes('/hang/')) return faults.slowHeaders(60_000)(req, res);
      // A body that announces its length, sends its first bytes, then the rest slowly.
      if (req.url!.includes('/declared-')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ANSWER_BYTES) });
        res.write('{"data":[');
        return;
      }
      if (req.url!.includes('/big/')) res.once('finish', sent);
      faults.oversized(ANSWER_BYTES)(req, res);
    }, env);
    // One request holds a 700 KB answer while another of its fields waits on a call that never ends.
    const holder = new AbortController();
    const held = fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ big: catalogProducts(catalogId: "big") hang: catalogProducts(catalogId: "hang") }',
      }),
      signal: holder.signal,
    }).catch(() => undefined);
    // Its answer is in the kernel's buffers before the next request is sent: read and charged before that one's.
    await bigSent;
    await vi.waitFor(() => expect(upstream.requests.some((r) => r.url.includes('/hang/'))).toBe(true));
    // Its 700 KB cannot fit beside them: the answer says so at once, without waiting for the body,
    // and the connection it came on is closed rather than read to its end.
    const closedBefore = upstream.closedSockets;
    const answer = await fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ f: catalogProducts(catalogId: "declared-1") }' }),
      signal: AbortSignal.timeout(3_000),
    });
    expect(tooLarge(await answer.text())).toBe(1);
    await vi.waitFor(() => expect(upstream.closedSockets).toBeGreaterThan(closedBefore), { timeout: 2_000 });
    holder.abort();
    await held;
  });
});
