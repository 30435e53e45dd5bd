import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const MiB = 2 ** 20;
const PAD = 'x'.repeat(8_192);

// Every answer carries about 8 KB: 400 distinct reads are about three times the 1 MiB bound.
const padded = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, pad: PAD }] }));
};

const fixture = useFacade({ PIM_STALE_MAX_BYTES: '1048576', PIM_API_KEY: 'key-of-a-123' }, padded);

const heldBytes = async () =>
  Number(/^pim_stale_store_bytes (\d+)/m.exec((await fixture.facade.app.metrics()).body)?.[1]);

describe('PIM_STALE_MAX_BYTES bounds the last-known-good copies', () => {
  it('keeps a flood of distinct reads under the bound, the least recently used out', async () => {
    for (let batch = 0; batch < 40; batch++) {
      const fields = Array.from({ length: 10 }, (_, i) => `r${i}: catalogProducts(catalogId: "F${batch * 10 + i}")`);
      expect((await fixture.facade.post(`{ ${fields.join(' ')} }`)).body.errors).toBeUndefined();
      expect(await heldBytes()).toBeLessThanOrEqual(MiB);
    }
    expect(await heldBytes()).toBeGreaterThan(MiB / 2);
    fixture.upstream.respond(faults.status(500));
    // The newest read is still kept; the oldest was dropped to make room.
    const newest = await fixture.facade.post('{ r: catalogProducts(catalogId: "F399") }');
    expect(newest.body.extensions.stale).toHaveLength(1);
    const oldest = await fixture.facade.post('{ r: catalogProducts(catalogId: "F0") }');
    expect(oldest.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });
});
