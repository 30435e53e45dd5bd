import { createHash } from 'node:crypto';

/** The `meta.paging` block of the older prodexa envelope. */
export interface Paging {
  per_page: number;
  page: number;
  total_pages: number;
  total_items: number;
  sorting?: string;
  links?: Record<string, string>;
}

/** A JSON reply before it becomes a Response. */
export interface Reply {
  status: number;
  body: unknown;
}

/** `{ status: 200, meta, data }` with the caller's languageId echoed (null when absent). */
export function ok(languageId: string | null, data: unknown[], paging?: Paging): Reply {
  const meta = paging
    ? { languageId, paging, contentType: 'application/json' }
    : { languageId, contentType: 'application/json' };
  return { status: 200, body: { status: 200, meta, data } };
}

/** `{ status, meta: { languageId }, error }`, the documented error shape. */
export function fail(status: number, languageId: string | null, error: string): Reply {
  return { status, body: { status, meta: { languageId }, error } };
}

/** Thrown while reading parameters; the router turns it into a 400 reply. */
export class BadRequestError extends Error {
  override name = 'BadRequestError';
}

/**
 * Serialises a reply. 200 and 404 are cacheable for 60 s like a real upstream behind a CDN,
 * with a strong ETag over the bytes so `If-None-Match` revalidates to 304.
 */
export function toResponse(reply: Reply, request: Request): Response {
  const text = JSON.stringify(reply.body);
  const headers = new Headers({ 'content-type': 'application/json; charset=utf-8' });
  if (reply.status === 200 || reply.status === 404) {
    const etag = `"${createHash('sha1').update(text).digest('base64url')}"`;
    headers.set('cache-control', 'max-age=60');
    headers.set('etag', etag);
    const inm = request.headers.get('if-none-match');
    if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) {
      return new Response(null, { status: 304, headers });
    }
  } else {
    headers.set('cache-control', 'no-store');
  }
  if (reply.status === 405) headers.set('allow', 'GET');
  return new Response(text, { status: reply.status, headers });
}
