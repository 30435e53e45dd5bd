import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import vary from 'vary';
import { refusalBody } from '../errors.ts';

export interface SecurityOptions {
  /** Introspection queries allowed; GraphiQL and suggestions follow the same setting. */
  introspection: boolean;
  /** Require a custom header on requests a browser would send without a CORS preflight. */
  csrfPrevention: boolean;
  /** Federation's `_service { sdl }` answered; it is the whole schema. */
  serviceSdl: boolean;
}

/**
 * Headers the CSRF prevention takes as proof of a preflight (one is enough): Yoga's own, and those Apollo's
 * servers and router take, so clients configured for them work here too. GraphiQL sends none: it POSTs JSON.
 */
const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'apollo-require-preflight', 'x-apollo-operation-name'];

// What a plain HTML form can POST without a CORS preflight: never a GraphQL request of ours.
const formTypes = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

/**
 * Cross-site and discovery protections: form content types refused with 415, optional CSRF
 * prevention (Yoga's plugin), and introspection refused by graphql-js' own rule when off.
 * GET stays allowed for queries only, which is Yoga's default (a GET mutation is a 405).
 */
export function useSecurity({ introspection, csrfPrevention, serviceSdl }: SecurityOptions): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      if (csrfPrevention) addPlugin(withCsrfCode(useCSRFPrevention({ requestHeaders: CSRF_HEADERS })));
    },
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== 'POST') return;
      // The type Yoga's parsers read: the first of a comma-separated list (`application/x-www-form-urlencoded, x` is
      // read as a form), before its parameters.
      const type = (request.headers.get('content-type') ?? '').split(',')[0]!.split(';')[0]!.trim().toLowerCase();
      if (!formTypes.has(type)) return;
      const message = `POST with content type ${type} is not accepted; send application/json`;
      endResponse(
        new fetchAPI.Response(refusalBody(415, message), {
          status: 415,
          headers: { 'content-type': 'application/json; charset=utf-8' },
        }),
      );
    },
    onValidate({ addValidationRule }) {
      addValidationRule(operationTypeExists);
      addValidationRule(noProtoVariable);
      if (!introspection) addValidationRule(NoSchemaIntrospectionCustomRule);
      if (!serviceSdl) addValidationRule(noServiceSdl);
    },
  };
}

// A browser app reads only exposed headers: the request id to quote, how old an answer is, and when to retry a 503.
const EXPOSED_HEADERS = ['x-request-id', 'etag', 'age', 'retry-after'];

/**
 * Yoga's `cors` option for an allow-list: listed origins get CORS headers naming exactly them,
 * any other origin gets none, so a browser withholds the answer. No list: no CORS at all.
 */
export function corsFor(origins: readonly string[]): YogaServerOptions<object, object>['cors'] {
  if (origins.length === 0) return false;
  const listedOrigin = listed(origins);
  return (request: Request) => {
    const origin = listedOrigin(request.headers.get('origin'));
    if (!origin) return false;
    return {
      origin: [origin],
      methods: ['GET', 'POST'],
      credentials: false,
      maxAge: 600,
      exposedHeaders: EXPOSED_HEADERS,
    };
  };
}

/**
 * The CORS headers of an answer the node:http server sends itself (413, 503, ...), which Yoga's CORS never sees:
 * without them a browser on a listed origin gets a network error in place of the refusal and its code.
 */
export function corsHeadersOf(origins: readonly string[]): (origin: string | undefined) => Record<string, string> {
  if (origins.length === 0) return () => ({});
  const listedOrigin = listed(origins);
  return (caller): Record<string, string> => {
    const origin = listedOrigin(caller);
    if (!origin) return { vary: 'Origin' };
    const exposed = EXPOSED_HEADERS.join(', ');
    return { 'access-control-allow-origin': origin, 'access-control-expose-headers': exposed, vary: 'Origin' };
  };
}

/** The caller's Origin when the allow-list names it (in any case), else undefined. */
function listed(origins: readonly string[]) {
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  return (origin: string | null | undefined) => (origin && allowed.has(origin.toLowerCase()) ? origin : undefined);
}

/**
 * With an allow-list, whether a response carries CORS headers, and which origin they name, depends
 * on the caller's Origin, on every response (an unlisted or missing Origin gets none): `Vary: Origin`
 * on all of them keeps a shared cache from handing one origin's answer to another.
 */
export function useCorsVary(origins: readonly string[]): Plugin {
  if (origins.length === 0) return {};
  return {
    // Runs after Yoga's CORS hook, which sets (not appends) its own Vary.
    onResponse({ response }) {
      response.headers.set('vary', vary.append(response.headers.get('vary') ?? '', 'Origin'));
    },
  };
}

// `_service { sdl }` prints the schema like introspection does, so it is off where introspection is.
const noServiceSdl: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value !== '_service' || context.getParentType()?.name !== 'Query') return;
    const message = 'The subgraph SDL is not served here; publish it with `npm run sdl` or set FEDERATION_SDL=true';
    context.reportError(new GraphQLError(message, { nodes: node }));
  },
});

// The GraphQL spec's "operation type existence", which graphql-js 16 leaves to execution: a mutation here got
// `data: null` and an error without a code, as if it had run. The schema is read-only.
const operationTypeExists: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const schema = context.getSchema();
    const root = {
      query: schema.getQueryType(),
      mutation: schema.getMutationType(),
      subscription: schema.getSubscriptionType(),
    };
    if (root[node.operation]) return;
    context.reportError(
      new GraphQLError(`This schema has no ${node.operation} type: the catalog is read-only`, { nodes: node }),
    );
  },
});

// graphql-js coerces variables into a plain `{}`, where `__proto__` sets the prototype instead of a key: the value of a
// `$__proto__` was dropped, a filter reached the PIM as absent, `@defer(if:)` took its default, a required use failed
// without a code. Refused by name before anything runs.
const noProtoVariable: ValidationRule = (context) => ({
  VariableDefinition(node) {
    if (node.variable.name.value !== '__proto__') return;
    context.reportError(
      new GraphQLError('Variable "$__proto__" cannot carry a value here; give it another name', { nodes: node }),
    );
  },
});

// Yoga's CSRF refusal, with the stable code every other refusal has.
function withCsrfCode(plugin: Plugin): Plugin {
  const check = plugin.onRequestParse!;
  return {
    onRequestParse(payload) {
      try {
        return check(payload);
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        throw new GraphQLError(error.message, { extensions: { ...error.extensions, code: 'CSRF_HEADER_REQUIRED' } });
      }
    },
  };
}
