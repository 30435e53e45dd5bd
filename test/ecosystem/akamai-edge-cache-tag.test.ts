import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

const pim: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

// Akamai's Fast Purge rules for the Edge-Cache-Tag header (techdocs.akamai.com, "Assign cache tags"): tags are
// comma-delimited RFC 7230 tokens of these characters only (a colon, among others, is refused: BADCHAR), at most 128
// characters each (TAG2BIG) and 128 per object (TAGSCNT). A refused tag is removed from the header without an error:
// the object is cached untagged, and no purge by tag reaches it.
const akamaiTag = /^[A-Za-z0-9&'^\-$!`#%.+~_|]{1,128}$/;
const url = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;

it('names tags in Edge-Cache-Tag as Akamai takes them, so a purge by tag reaches the response', async () => {
  const { facade } = await servers.start(pim, {
    SURROGATE_KEY_HEADER: 'Edge-Cache-Tag',
    RESPONSE_CACHE_MAX_BYTES: '1048576',
  });
  // Executed, then a hit of the cache of results.
  for (let i = 0; i < 2; i++) {
    const answer = await facade.get(url('{ p: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9") }'));
    expect(answer.headers.get('cache-control')).toMatch(/^public/);
    const tags = answer.headers.get('edge-cache-tag')!.split(',');
    expect(tags).toHaveLength(2);
    for (const tag of tags) expect(tag).toMatch(akamaiTag);
  }
});

it('keeps a response whose tag Akamai would drop (over 128 characters) out of the CDN', async () => {
  const { facade } = await servers.start(pim, { SURROGATE_KEY_HEADER: 'Edge-Cache-Tag' });
  // Within MAX_ID_LENGTH (128): its tag, `catalog:` and the id, is 133 characters.
  const answer = await facade.get(url(`{ p: catalogProducts(catalogId: "${'M'.repeat(125)}") }`));
  expect(answer.body.errors).toBeUndefined();
  const tags = answer.headers.get('edge-cache-tag');
  if (/^public/.test(answer.headers.get('cache-control') ?? '')) {
    for (const tag of (tags ?? '').split(',')) expect(tag).toMatch(akamaiTag);
  } else expect(tags).toBeNull();
});
