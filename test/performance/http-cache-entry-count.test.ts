import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// docs/configuration.md: PIM_CACHE_MAX_BYTES is the bound of the in-process HTTP cache. undici's MemoryCacheStore has
// a count bound of its own, 1,024 entries, which the façade left at its default: the 1,025th answer emptied the
// cache down to 512 entries, whatever the bytes, so a catalog read by more than a thousand URLs was called again and
// again with 64 MiB of cache nearly empty (raising PIM_CACHE_MAX_BYTES changed nothing).
describe('the HTTP cache of upstream answers', () => {
  it('keeps more than 1,024 small fresh answers while they fit PIM_CACHE_MAX_BYTES', async () => {
    const { upstream, facade } = await servers.start(cacheableEcho(600));
    // 1,500 answers of about 150 bytes: some 220 KB, far inside the default 64 MiB.
    for (let i = 0; i < 1_500; i++) {
      const { status } = await facade.post(`{ catalogProducts(catalogId: "C${i}") }`);
      expect(status).toBe(200);
    }
    upstream.reset();
    // Another document (an alias) for the same calls: the cache of whole results does not answer these.
    for (let i = 0; i < 300; i++) await facade.post(`{ again: catalogProducts(catalogId: "C${i}") }`);
    expect(upstream.requests.length, 'upstream calls for answers still fresh in the cache').toBe(0);
  }, 60_000);
});
