import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// RFC 8259 §8.1 lets a parser ignore a byte order mark; some .NET and Java services put one first. It was
// read as "2xx that is not JSON": an error for every field, and a PIM counted as answering garbage.
it('reads a JSON body that starts with a byte order mark', async () => {
  const { facade } = await servers.start((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('\uFEFF{"status":200,"data":[{"id":"G"}]}'),
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(body).toEqual({ data: { classificationGroups: { status: 200, data: [{ id: 'G' }] } } });
});
