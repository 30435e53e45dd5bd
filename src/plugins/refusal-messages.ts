import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { notServedMessage, refusalBody, refusalCode } from '../errors.ts';
import { streams } from './limits.ts';

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

const streamNotAccepted = () =>
  createGraphQLError(
    'This operation streams its answer (@defer, @stream); accept multipart/mixed or text/event-stream',
    {
      extensions: { http: { status: 406 }, code: 'NOT_ACCEPTABLE' },
    },
  );

// The types Yoga's result processors send, in the order (and the form) its own 406 listed them.
const SERVED = ['text/event-stream', 'multipart/mixed', 'application/graphql-response+json', 'application/json'];
const SERVED_LIST = SERVED.join('; charset=utf-8, ');

// Yoga's rules for Accept (graphql-yoga's result-processor/accept.js): wildcards match, a charset other than UTF-8
// rules its type out, q-values are not read.
// Clients send one Accept over and over: the last verdict is kept.
function accepts(types: readonly string[]) {
  let lastAccept = '';
  let lastVerdict = true;
  return (accept: string | null): boolean => {
    if (!accept) return true;
    if (accept === lastAccept) return lastVerdict;
    const verdict = verdictOf(accept, types);
    [lastAccept, lastVerdict] = [accept, verdict];
    return verdict;
  };
}
const acceptable = accepts(SERVED);
const acceptsStreams = accepts(SERVED.slice(0, 2));

function verdictOf(accept: string, types: readonly string[]): boolean {
  return accept
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .some((range) => {
      const [type = '', ...params] = range.split(';');
      // As Yoga's result processor reads it: the first parameter that holds `charset=` anywhere (`xcharset=a` too),
      // or a range this check let through would run and be refused only once its result is there.
      const charset = params.find((param) => param.includes('charset='));
      if (charset !== undefined && charset !== 'charset=utf-8') return false;
      const [group, name] = type.split('/');
      return types.some((served) => {
        const [servedGroup, servedName] = served.split('/');
        return (group === '*' || group === servedGroup) && (name === '*' || name === servedName);
      });
    });
}

/**
 * Refuses a GET whose `variables` or `extensions` are not JSON with a 400, as Yoga does a POST body.
 * Gives Yoga's bodiless refusals a one-line JSON message saying what to send instead, as every
 * other refusal has: 404 for a path that is not the GraphQL endpoint, 406 for an `Accept` no
 * answer can meet, 415 for a POST without a content type Yoga reads, and any other that comes
 * without a body. The 406 comes before the request is parsed (an operation that would stream, before it runs):
 * the operation never runs.
 */
export function useRefusalMessages(): Plugin {
  let endpoint = '/graphql';
  return {
    onYogaInit({ yoga }) {
      endpoint = yoga.graphqlEndpoint;
    },
    onRequestParse({ request, requestParser, setRequestParser, endResponse, fetchAPI }) {
      // Yoga matches Accept only once the result is there: the operation ran, PIM calls and all, for an answer
      // nobody could take. Refused here, bare, and given its message below as Yoga's own 406 was.
      if (!acceptable(request.headers.get('accept'))) {
        return endResponse(new fetchAPI.Response(null, { status: 406, headers: { accept: SERVED_LIST } }));
      }
      if (request.method === 'POST') return batchCheck;
      // Yoga's GET parser lets JSON.parse throw on `variables` or `extensions`, which it then answers as a 500.
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
    // An answer that would stream, to a client that takes no stream: Yoga found out once the result was there.
    onExecute({ args, setResultAndStopExecution }) {
      const { request } = args.contextValue as { request: Request };
      if (acceptsStreams(request.headers.get('accept'))) return;
      if (!streams(args.document, args.operationName, args.variableValues)) return;
      setResultAndStopExecution({ errors: [streamNotAccepted()] });
    },
    onResponse({ request, response, serverContext, setResponse, fetchAPI }) {
      if (!isRewritten(response)) return;
      const message = messageFor(response, request, endpoint, serverContext);
      // The headers other plugins set (request id, CORS, Yoga's `accept` list on a 406) stay.
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      // A length Yoga gave its own body would cut this one. The framing and coding of the stream its result processor
      // chose (multipart's `Transfer-Encoding: chunked`, the event stream's `Content-Encoding: none`) are not this
      // body's: kept beside its length, the head had both Content-Length and Transfer-Encoding.
      for (const name of ['content-length', 'transfer-encoding', 'content-encoding']) headers.delete(name);
      // Yoga's `GET, POST`: the server serves HEAD as GET (http/server.ts).
      if (response.status === 405 && request.method !== 'GET') headers.set('allow', 'GET, HEAD, POST');
      setResponse(new fetchAPI.Response(refusalBody(response.status, message), { status: response.status, headers }));
    },
  };
}

// Yoga's bare refusals, and its 405s and its 413 of a batch too long, which have a body with the code BAD_REQUEST:
// they get the status's own, as every refusal has.
function isRewritten(response: Response): boolean {
  const bare = response.status >= 400 && response.body === null && !response.headers.has('content-type');
  return bare || response.status === 405 || response.status === 413;
}

/** The code the one error of a Yoga refusal carries once this plugin has rewritten it; undefined for any other answer. */
export const rewrittenCode = (response: Response): string | undefined =>
  isRewritten(response) ? refusalCode(response.status) : undefined;

/**
 * The code of a response sent as one refusal: a Yoga refusal this plugin rewrote, or (its result carrying no errors
 * `withErrors`) one answered without a result, Yoga's 404 and 406, a 415; undefined for any other answer.
 */
export const refusedCode = (response: Response, withErrors: boolean): string | undefined =>
  rewrittenCode(response) ?? (!withErrors && response.status >= 400 ? refusalCode(response.status) : undefined);

// The Accept as the client sent it: the server ranks it by weight before Yoga reads it (http/request-head.ts), and a
// refusal names what was sent. node:http keeps the head as it came.
function sentAccept(serverContext: unknown, request: Request): string | null {
  const raw = (serverContext as { req?: IncomingMessage } | undefined)?.req?.rawHeaders;
  const sent: string[] = [];
  for (let at = 0; raw && at < raw.length; at += 2) if (raw[at]!.toLowerCase() === 'accept') sent.push(raw[at + 1]!);
  return sent.length > 0 ? sent.join(', ') : request.headers.get('accept');
}

function messageFor(response: Response, request: Request, endpoint: string, serverContext: unknown): string {
  const { method, headers } = request;
  switch (response.status) {
    case 404:
      return notServedMessage(endpoint);
    case 413:
      return `A batch holds at most ${MAX_BATCH_OPERATIONS} operations; send the others in another request`;
    case 405:
      return method === 'GET'
        ? 'A mutation is sent with POST; GET serves queries only'
        : `${echo(method)} is not served here; send GET, HEAD or POST`;
    case 406: {
      // Yoga lists the types it could have answered with in `accept`, each with its charset.
      const served = (response.headers.get('accept') ?? '').split(',').map((type) => type.split(';')[0]!.trim());
      const accept = sentAccept(serverContext, request);
      return `No answer can be sent as ${echo(accept)}; accept ${served.filter(Boolean).join(' or ')}`;
    }
    case 415: {
      const type = headers.get('content-type')?.split(';')[0]!.trim();
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
