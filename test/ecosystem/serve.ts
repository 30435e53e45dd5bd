import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp, type AppExtras } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

/** The real app behind a real `node:http` server on 127.0.0.1:0, for clients that speak HTTP. */
export async function serveApp(
  pimBaseUrl: string,
  env: Record<string, string> = {},
  { logger, extras }: { logger?: Logger; extras?: AppExtras } = {},
) {
  const config = loadConfig({ PIM_BASE_URL: pimBaseUrl, ...env });
  const app = createApp({ ...config, pimBaseUrl }, logger, extras);
  const methods: string[] = [];
  const server = createServer((req, res) => {
    methods.push(req.method ?? '');
    void app.yoga(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    app,
    /** HTTP methods of the requests received, in order. */
    methods,
    origin: `http://127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/graphql`,
    /** POSTs one operation to /graphql; resolves with the response and its parsed body. */
    async post(query: string, headers: Record<string, string> = {}) {
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
      return { response, body: await response.json() };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
    },
  };
}
