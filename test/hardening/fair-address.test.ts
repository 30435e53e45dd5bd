import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { faults } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasedCalls, countInFlight, postTimed } from '../helpers/burst.ts';

const { startUpstream, startFacade } = closedAfterEach();
const keyedUncached = { PIM_API_KEY: 'server-key-0001', PIM_CACHE: 'false' };

const slowBurst = (group: (req: IncomingMessage) => string | undefined, ms: number) =>
  countInFlight(group, (req, res) =>
    req.url?.includes('/slow') ? faults.slowHeaders(ms)(req, res) : faults.ok(req, res),
  );

describe('TRUSTED_CLIENT_IP_HEADER groups a client by its address', () => {
  // RFC 7239 §6 lets a proxy write the client's node with its port (`for="192.0.2.43:47011"`); Azure's gateways
  // write `IP:port` into X-Forwarded-For. One client on 10 connections is still one address.
  it.each([
    ['Forwarded', (ip: string, port: number) => `for="${ip}:${port}";proto=https`],
    ['X-Forwarded-For', (ip: string, port: number) => `${ip}:${port}`],
    // HAProxy's `option forwarded`: four parameters, 87 characters.
    [
      'Forwarded',
      (ip: string, port: number) => `proto=https;host="catalog-graphql.example.com";by=10.9.9.9;for="${ip}:${port}"`,
    ],
    // An obfuscated port (RFC 7239 §6.3).
    ['Forwarded', (ip: string, port: number) => `for="${ip}:_p${port}"`],
    // A quote the client left open in its own entry, the proxy's added after it (nginx's $proxy_add_x_forwarded_for).
    ['X-Forwarded-For', (ip: string, port: number) => `"r${port}, ${ip}`],
    ['Forwarded', (ip: string, port: number) => `for="r${port}, for=${ip}`],
    // The Host the client chose, quoted by the proxy, with a `;` and a `,` and `for=`s of the client's own in it.
    [
      'Forwarded',
      (ip: string, port: number) =>
        `host="x.example.com;for=198.51.100.${port % 250},for=203.0.113.${port % 250}";by=10.9.9.9;for="${ip}:${port}"`,
    ],
  ])(
    '%s with the client port: ten connections of one address are one share (entry %#)',
    async (header, entry) => {
      const { handler, peaks } = slowBurst((req) => req.url?.match(/classifications\/slow([AB])/)?.[1], 300);
      const upstream = await startUpstream(handler);
      const facade = await startFacade(upstream.url, { ...keyedUncached, TRUSTED_CLIENT_IP_HEADER: header });
      // Address A: 10 requests, each from its own connection (source port), as the proxy saw them.
      const burst = Array.from({ length: 10 }, (_, r) =>
        postTimed(facade.origin, aliasedCalls(`slowA${r}`, 15), { [header]: entry('10.0.0.1', 40_000 + r) }),
      );
      await expect.poll(() => peaks.get('A')).toBe(12);
      const b = await postTimed(facade.origin, aliasedCalls('slowB', 15), { [header]: entry('10.0.0.2', 50_000) });
      await Promise.all(burst);
      expect(b.body.errors).toBeUndefined();
      // Two addresses: B should get about half of the credential's 12 connections, as with a bare address.
      expect(peaks.get('B')).toBeGreaterThanOrEqual(5);
    },
    40_000,
  );
});
