import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { postTimed } from '../helpers/burst.ts';
import { faults } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

// A shared call keeps the budget of the request that queued it first: run out in the queue, it failed every request
// that joined it with BUDGET_EXCEEDED, though each had most of its own budget left and alone would have been answered.
it.each([
  ['off', 'false'],
  ['on', 'true'],
])(
  "PIM_COALESCE %s: B is not failed by another request's budget",
  async (_name, coalesce) => {
    // "hog" never answers; every other call answers at once.
    const pim = (req: IncomingMessage, res: ServerResponse) =>
      req.url?.includes('/hog/') ? undefined : faults.ok(req, res);
    const { facade } = await start(pim, {
      PIM_API_KEY: 'server-key-0001',
      PIM_CACHE: 'false',
      PIM_STALE_IF_ERROR_MS: '0',
      PIM_MAX_CONCURRENCY: '1',
      GRAPHQL_BUDGET_MS: '4000',
      PIM_TIMEOUT_MS: '4000',
      PIM_COALESCE: coalesce,
    });
    // Keyless client A: its first call holds the one connection until A's budget ends; P and Q wait behind it.
    const a = postTimed(
      facade.origin,
      '{ h: classificationGroups(classificationId: "hog") p: classificationGroups(classificationId: "P") q: classificationGroups(classificationId: "Q") }',
    );
    await sleep(2_500);
    // Keyless client B asks for P and Q (joining both), 1.5 s before A's budget ends, with 4 s of its own: the
    // connection frees when A's budget ends, and P and Q answer at once.
    const b = await postTimed(
      facade.origin,
      '{ p: classificationGroups(classificationId: "P") q: classificationGroups(classificationId: "Q") }',
    );
    await a;
    expect(b.body.errors).toBeUndefined();
  },
  20_000,
);
