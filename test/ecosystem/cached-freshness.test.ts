import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// Each catalog id answers with its own caching headers; the body echoes the path.
const headersByCatalog: Record<string, Record<string, string>> = {
  BARE: {},
  SPLIT: { 'cache-control': 's-maxage=300, max-age=10' },
  // Not an HTTP-date: already expired (RFC 9111 §5.3), though Date.parse reads the year 3600 in it.
  NOTADATE: { expires: '3600' },
};
// A lifetime stated by Expires alone (RFC 9111 §5.3): an hour from the answer's Date.
const expiresInAnHour = () => {
  const now = Date.now();
  return { date: new Date(now).toUTCString(), expires: new Date(now + 3_600_000).toUTCString() };
};
function answer(req: IncomingMessage, res: ServerResponse) {
  const id = /catalogs\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
  const headers = id === 'EXPIRES' ? expiresInAnHour() : headersByCatalog[id];
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
}

const fixture = useFacade({ PIM_API_KEY: 'server-key', PIM_CACHE_TTL_MS: '60000' }, answer);

/** Sends the same GET three times in a row and returns each answer's Cache-Control. */
async function threeTimes(catalogId: string) {
  const query = `{ catalogProducts(catalogId: "${catalogId}") }`;
  const cacheControls: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await fixture.facade.get(`/graphql?query=${encodeURIComponent(query)}`);
    expect(response.status).toBe(200);
    cacheControls.push(response.headers.get('cache-control') ?? '');
  }
  return cacheControls;
}

const lifetime = (cacheControl: string, name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(cacheControl)?.[1]);

describe('Cache-Control of answers served again from the façade’s upstream cache', () => {
  it('stays no-store for an upstream answer without caching headers, however long PIM_CACHE_TTL_MS keeps it', async () => {
    expect(await threeTimes('BARE')).toEqual(['no-store', 'no-store', 'no-store']);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('counts a lifetime the upstream stated with Expires alone, as the upstream cache itself does', async () => {
    const answers = await threeTimes('EXPIRES');
    expect(fixture.upstream.requests).toHaveLength(1);
    for (const cacheControl of answers) {
      expect(cacheControl).toMatch(/^public, max-age=\d+, s-maxage=\d+$/);
      expect(lifetime(cacheControl, 'max-age')).toBeGreaterThanOrEqual(3_590);
      expect(lifetime(cacheControl, 'max-age')).toBeLessThanOrEqual(3_600);
    }
  });

  it('takes an Expires that is no HTTP-date for already expired', async () => {
    expect(await threeTimes('NOTADATE')).toEqual(['no-store', 'no-store', 'no-store']);
  });

  it('keeps the browser lifetime (max-age) apart from the shared one (s-maxage) on every hit', async () => {
    const answers = await threeTimes('SPLIT');
    expect(fixture.upstream.requests).toHaveLength(1);
    expect(answers[0]).toBe('public, max-age=10, s-maxage=300');
    // Only the whole seconds elapsed between the calls may be taken off; the machine may be slow.
    for (const cacheControl of answers.slice(1)) {
      expect(cacheControl).toMatch(/^public, max-age=\d+, s-maxage=\d+$/);
      expect(lifetime(cacheControl, 'max-age')).toBeGreaterThanOrEqual(7);
      expect(lifetime(cacheControl, 'max-age')).toBeLessThanOrEqual(10);
      expect(lifetime(cacheControl, 's-maxage')).toBeGreaterThanOrEqual(297);
      expect(lifetime(cacheControl, 's-maxage')).toBeLessThanOrEqual(300);
    }
  });
});
