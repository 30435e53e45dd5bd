// `npm run sdl`: prints the subgraph SDL to publish to a schema registry or compose a supergraph with.
import { readSubgraphSdl } from './federation.ts';
import { schema } from './index.ts';

process.stdout.write(await readSubgraphSdl(schema));
