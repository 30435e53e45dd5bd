import { builder } from './builder.ts';
import { FEDERATION_LINK } from './federation.ts';
import { guardEntities } from './representations.ts';
import './products.ts';
import './classifications.ts';

/**
 * The executable schema: the three root fields, the entities Catalog, Classification and
 * ClassificationGroup, and `_service { sdl }` with `_entities`, which make the server a federation
 * v2 subgraph. Pothos sorts it, so its printed form is stable.
 */
export const schema = guardEntities(builder.toSubGraphSchema({ linkUrl: FEDERATION_LINK }));
