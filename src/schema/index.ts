import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './products.ts';
import './classifications.ts';

/** The executable schema, sorted so its printed form is stable. */
export const schema = lexicographicSortSchema(builder.toSchema());
