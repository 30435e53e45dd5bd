import { STATUS_CODES } from 'node:http';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { refusalBody } from '../errors.ts';

/** Operations one batch may hold (GRAPHQL_BATCHING): Yoga refuses more with a 413. */
export const MAX_BATCH_OPERATIONS = 10;

// A batch (GRAPHQL_BATCHING) of no operation is a malformed request, which Yoga answered `200 []`.
const batchCheck = {
  onRequestParseDone({ requestParserResult }: { requestParserResult: unknown }) {
    if (Array.isArray(requestParserResult) && requestParserResult.length === 0)
      throw createGraphQLError('A batch holds at least one operation', {
        extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
      });
  },
};

/**
 * Refuses a GET whose `variables` or `extensions` are not JSON with a 400, as Yoga does a POST body.
 * Gives Yoga's bodiless refusals a one-line JSON message saying what to send instead, as every
 * other refusal has: 404 for a path that is not the GraphQL endpoint, 406 for an `Accept` no
 * answer can meet, 415 for a POST without a content type Yoga reads, and any other that comes
 * without a body.
 */
export function useRefusalMessages(): Plugin {
  let endpoint = '/graphql';
  return {
    onYogaInit({ yoga }) {
      endpoint = yoga.graphqlEndpoint;
    },
    // Yoga's GET parser lets JSON.parse throw on `variables` or `extensions`, which it then answers as a 500.
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method === 'POST') return batchCheck;
      if (request.method !== 'GET' || !requestParser) return;
      setRequestParser((req) => {
        try {
          return requestParser(req);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          throw createGraphQLError('The variables or extensions parameter of this GET request is not valid JSON.', {
            extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
          });
        }
      });
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      // Yoga's 405s and its 413 of a batch too long have a body, with the code BAD_REQUEST: they get the status's
      // own, as every refusal has.
      const bare = response.status >= 400 && response.body === null && !response.headers.has('content-type');
      if (!bare && response.status !== 405 && response.status !== 413) return;
      const message = messageFor(response, request, endpoint);
      // The headers other plugins set (request id, CORS, Yoga's `accept` list on a 406) stay.
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      // A length Yoga gave its own body would cut this one.
      headers.delete('content-length');
      setResponse(new fetchAPI.Response(refusalBody(response.status, message), { status: response.status, headers }));
    },
  };
}

function messageFor(response: Response, { method, headers: request }: Request, endpoint: string): string {
  switch (response.status) {
    case 404:
      return `Nothing is served here; GraphQL is at ${endpoint}`;
    case 413:
      return `A batch holds at most ${MAX_BATCH_OPERATIONS} operations; send the others in another request`;
    case 405:
      return method === 'GET'
        ? 'A mutation is sent with POST; GET serves queries only'
        : `${echo(method)} is not served here; send GET or POST`;
    case 406: {
      // Yoga lists the types it could have answered with in `accept`, each with its charset.
      const served = (response.headers.get('accept') ?? '').split(',').map((type) => type.split(';')[0]!.trim());
      return `No answer can be sent as ${echo(request.get('accept'))}; accept ${served.filter(Boolean).join(' or ')}`;
    }
    case 415: {
      const type = request.get('content-type')?.split(';')[0]!.trim();
      return `POST ${type ? `with content type ${echo(type)}` : 'without a content type'} is not accepted; send application/json`;
    }
    default:
      return STATUS_CODES[response.status] ?? 'Refused';
  }
}

// A refusal stays one short line: what the client sent is named, not copied back whole (a head may be 16 KB).
const ECHO_LENGTH = 100;
const echo = (value: string | null | undefined) =>
  value && value.length > ECHO_LENGTH ? `${value.slice(0, ECHO_LENGTH)}…` : value;
