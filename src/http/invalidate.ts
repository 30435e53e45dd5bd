import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { ALL } from '../pim/cache/invalidations.ts';
import { alsoEnded, catalogTag, classificationTag } from '../pim/cache/tags.ts';
import { refusalHeaders } from '../errors.ts';

export interface InvalidationOptions {
  /** CACHE_ADMIN_TOKEN: the bearer token a caller must send. */
  token: string;
  /** Ends the freshness of the answers carrying `tag`, everywhere the cache is shared. */
  invalidate: (tag: string) => Promise<void>;
  /** MAX_ID_LENGTH: every id a request may use can be purged, counted as requests count it (code points). */
  maxIdLength: number;
}

/** The path the endpoint is served at, on the metrics port when there is one, else on the main port. */
export const INVALIDATION_PATH = '/cache/invalidate';

// Generous for one of three small bodies, its id written with every character escaped (`\uD83D\uDE00`, 12 bytes a
// code point, as some clients write JSON); the metrics port has no body limit of its own.
const maxBodyBytes = (maxIdLength: number) => Math.max(4_096, 12 * maxIdLength + 64);

function bodySchemaOf(maxIdLength: number) {
  // A lone surrogate is valid JSON but no id any request could have used, and no tag can encode it.
  const id = z
    .string()
    .min(1)
    .refine((value) => value.isWellFormed() && [...value].length <= maxIdLength);
  return z.union([
    z.strictObject({ catalogId: id }),
    z.strictObject({ classificationId: id }),
    z.strictObject({ all: z.literal(true) }),
  ]);
}

/**
 * The handler of `POST /cache/invalidate`: with the admin token as a bearer token and a body of
 * `{"catalogId"}`, `{"classificationId"}` or `{"all": true}`, it ends the freshness of the matching
 * cached answers (they stay usable as last-known-good). 401 without the token, 400 for another body.
 */
export function createInvalidationHandler({ token, invalidate, maxIdLength }: InvalidationOptions) {
  const expected = digest(token);
  const bodySchema = bodySchemaOf(maxIdLength);
  const maxBytes = maxBodyBytes(maxIdLength);
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'POST') return reply(res, 405, { error: 'Use POST' }, { allow: 'POST' });
    // The scheme is case-insensitive, one or more spaces after it (RFC 9110 §11.1, §11.4); the token is exact.
    const sent = bearer.exec(req.headers.authorization ?? '');
    // Hashing both sides first gives equal lengths, so the comparison time says nothing about the token.
    if (!timingSafeEqual(digest(sent?.[1] ?? ''), expected) || !sent) {
      return reply(res, 401, { error: 'A valid bearer token is required' }, { 'www-authenticate': 'Bearer' });
    }
    // Only a caller with the token is asked for its body.
    continueIfExpected(req, res);
    void readBody(req, maxBytes)
      .then(
        async (text) => {
          const parsed = bodySchema.safeParse(parseJson(text));
          if (!parsed.success) {
            return reply(res, 400, {
              error: 'Expected {"catalogId": "..."}, {"classificationId": "..."} or {"all": true}',
            });
          }
          const body = parsed.data;
          const tag =
            'catalogId' in body
              ? catalogTag(body.catalogId)
              : 'classificationId' in body
                ? classificationTag(body.classificationId)
                : ALL;
          try {
            await invalidate(tag);
            // The CDN's purge names every tag it ended: a classification's ends `classification:` too (tags.ts).
            const also = alsoEnded(tag);
            reply(res, 200, { invalidated: tag, ...(also !== undefined && { alsoInvalidated: [also] }) });
          } catch {
            // This instance no longer serves them as fresh; the others would not know.
            reply(res, 503, { error: 'Invalidated here, but the shared cache could not be told; retry' });
          }
        },
        () => reply(res, 400, { error: `The body must be JSON of at most ${maxBytes} bytes` }),
      )
      // Nothing above should throw; if it does, this caller gets a 500, not the process an unhandled rejection.
      .catch(() => res.headersSent || reply(res, 500, { error: 'The invalidation failed; retry' }));
  };
}

// Node's own reading of the header: `100-continue` among its values, in any case.
const continueExpression = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Sends `100 Continue` to a client that waits for it before sending its body (`Expect: 100-continue`). The listeners
 * handle `checkContinue` themselves, so Node sends none of its own: one that refuses first never asks for the body.
 */
export function continueIfExpected(req: IncomingMessage, res: ServerResponse): void {
  const { expect } = req.headers;
  if (expect !== undefined && req.httpVersion === '1.1' && continueExpression.test(expect) && !res.headersSent) {
    res.writeContinue();
  }
}

const bearer = /^bearer +(.+)$/i;

const digest = (value: string) => createHash('sha256').update(value).digest();

async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...refusalHeaders, ...headers });
  res.end(JSON.stringify(body));
}
