import { builder } from './builder.ts';
import { FEDERATION_LINK } from './federation.ts';
import './products.ts';
import './classifications.ts';

/**
 * The executable schema: the three fields plus `_service { sdl }`, which makes the server a
 * federation v2 subgraph. Pothos sorts it, so its printed form is stable.
 */
export const schema = builder.toSubGraphSchema({ linkUrl: FEDERATION_LINK });
