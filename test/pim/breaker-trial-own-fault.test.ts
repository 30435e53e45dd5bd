import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 500;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const ATTACKER = { 'x-api-key': 'attacker-credential' };
const VICTIM = { 'x-api-key': 'victim-credential' };

// Closed, the breaker asks its probe before one credential's run of faults (a catalog the PIM fails on) may open it
// for everyone: breaker-one-client.test.ts. Half-open, the one trial call decides alone: when it is a call the PIM
// fails for its own reasons, the breaker reopens, though the PIM answers its probe and every other call. One client
// asking its failing catalog first after each half-open delay keeps the breaker open, and every replica unready, for
// every credential, long after an outage ended.
it("does not let one credential's own failing call, as the half-open trial, keep the breaker open for others", async () => {
  let down = true;
  const handler: UpstreamHandler = (req, res) => {
    if (down || req.url!.includes('/catalogs/BAD/')) return void res.writeHead(500).end();
    echo(req, res);
  };
  const { facade } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
    PIM_STALE_IF_ERROR_MS: '0',
  });
  // A real outage opens the breaker.
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  // The PIM is back, but for the attacker's catalog.
  down = false;
  const victim: string[] = [];
  for (let round = 0; round < 3; round++) {
    await sleep(HALF_OPEN_MS + 100);
    // The attacker asks first: its call is the trial.
    const own = await facade.post(q('BAD'), {}, ATTACKER);
    expect(own.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    const { body } = await facade.post(q(`GOOD${round}`), {}, VICTIM);
    victim.push(body.errors ? String(body.errors[0].extensions.code) : 'answered');
  }
  expect(victim).toEqual(['answered', 'answered', 'answered']);
  expect(facade.app.upstream.breaker).toBe('closed');
}, 20_000);
