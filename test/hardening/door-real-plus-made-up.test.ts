import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

const ask = async (url: string, key: string) =>
  (
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ query: '{ classificationGroups(classificationId: "real") }' }),
    })
  ).status;

// One credential may hold three quarters of HTTP_MAX_IN_FLIGHT, and every key the PIM has not accepted shares one
// share of three quarters too: one client with one real key and made-up keys beside it, bodies that never end, holds
// every slot, and every other credential (here one the PIM accepted long ago) gets 503 until they time out.
it('leaves room at the door for another real credential when one client holds its own share and the unproven keys one', async () => {
  const { facade } = await start(faults.ok, { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false' });
  expect(await ask(facade.url, 'attacker-real-key')).toBe(200);
  expect(await ask(facade.url, 'victim-real-key')).toBe(200);
  const sockets = await Promise.all([
    // The attacker's own key: its three quarters.
    ...Array.from({ length: 6 }, () => heldPost(facade.port, 'attacker-real-key')),
    // Made-up keys: the share of the keys not seen accepted.
    ...Array.from({ length: 6 }, (_, i) => heldPost(facade.port, `made-up-${i}`)),
  ]);
  try {
    await sleep(200);
    expect(await ask(facade.url, 'victim-real-key')).toBe(200);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});
