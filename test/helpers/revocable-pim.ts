import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the PIM of `revocablePim` does now: answer, refuse the revoked credential (401), or fail every call (503). */
export type PimState = 'ok' | 'revoked' | 'down';

/**
 * A PIM whose answers any cache may keep (`public, max-age=300`: an answer to a call with Authorization is kept by the
 * HTTP cache only so), each naming its URL beside a secret of the catalog. Once `state` is `revoked` it answers 401 to
 * the calls `isRevoked` picks out (the others still get the catalog); once `down`, 503 to all. A call it accepts is
 * answered `delayOf(req)` ms later (a slow search), whatever is revoked meanwhile.
 */
export function revocablePim(isRevoked: (req: IncomingMessage) => boolean, delayOf = (_req: IncomingMessage) => 0) {
  const pim = {
    state: 'ok' as PimState,
    handler(req: IncomingMessage, res: ServerResponse) {
      if (pim.state === 'down') {
        res.writeHead(503, { 'content-type': 'application/json' });
        return void res.end('{"status":503,"meta":{},"error":"down"}');
      }
      if (pim.state === 'revoked' && isRevoked(req)) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return void res.end('{"status":401,"meta":{},"error":"API key revoked"}');
      }
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
        res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, secret: SECRET }] }));
      };
      const delay = delayOf(req);
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    },
  };
  return pim;
}

/** The secret each of the PIM's answers holds. */
export const SECRET = 'catalog-of-A';

/** A query of one catalog's products, as `p`. */
export const productsOf = (catalogId: string) => `{ p: catalogProducts(catalogId: "${catalogId}") }`;
