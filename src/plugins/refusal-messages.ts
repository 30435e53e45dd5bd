import type { Plugin } from 'graphql-yoga';

/**
 * Gives Yoga's bodiless refusals a one-line JSON message, as every other refusal has: 404 for a
 * path that is not the GraphQL endpoint, 415 for a POST without a content type Yoga reads.
 */
export function useRefusalMessages(): Plugin {
  let endpoint = '/graphql';
  return {
    onYogaInit({ yoga }) {
      endpoint = yoga.graphqlEndpoint;
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      if ((response.status !== 404 && response.status !== 415) || response.headers.has('content-type')) return;
      const type = request.headers.get('content-type')?.split(';')[0]!.trim();
      const message =
        response.status === 404
          ? `Nothing is served here; GraphQL is at ${endpoint}`
          : `POST ${type ? `with content type ${type}` : 'without a content type'} is not accepted; send application/json`;
      // The headers other plugins set (request id, CORS) stay.
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      setResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message }] }), { status: response.status, headers }),
      );
    },
  };
}
