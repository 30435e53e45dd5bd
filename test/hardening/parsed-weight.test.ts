import { readFileSync } from 'node:fs';
import { expect, it, onTestFinished } from 'vitest';
import { imageEnv } from '../../deploy/image/env.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { repoRoot, startProcess } from '../helpers/process.ts';

// 1 MiB of JSON that parses into about 14 MB: a third of a million empty arrays.
const body = `{"status":200,"data":[${'[],'.repeat(349_000)}[]]}`;

// The store of parsed answers weighed each by its JSON text: 32 MiB of these held over 400 MB of heap, and
// the production start (a 256 MB old space) ran out of memory at the 14th such answer kept.
it(
  'keeps the parsed answers within the old space the image gives, whatever they parse into',
  { timeout: 120_000 },
  async () => {
    const upstream = await startUpstream((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(body),
    );
    onTestFinished(() => upstream.close());
    const image = imageEnv(readFileSync(`${repoRoot}/Dockerfile`, 'utf8'));
    const server = startProcess(process.execPath, ['src/main.ts'], {
      env: { ...image, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: upstream.url },
    });
    onTestFinished(() => server.kill());
    const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
    // Each id twice: the second is answered from the parsed answer the first left in the store.
    for (let i = 0; i < 40; i++) {
      for (const alias of ['a', 'b']) {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `{ ${alias}: classificationGroups(classificationId: "M${i}") }` }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
    }
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr.join('\n')).not.toContain('heap out of memory');
  },
);
