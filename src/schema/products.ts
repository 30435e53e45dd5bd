import { builder } from './builder.ts';
import { describe, entityDescription, resultDescription } from './arguments.ts';
import { ClassificationGroup } from './classifications.ts';
import { asKeyedEntity } from './representations.ts';

// The search's arguments in groups, because the entities fill some of them in from their keys.
const catalogArg = builder.args((t) => ({ catalogId: t.id({ required: true, description: describe.catalogId }) }));
const filterArgs = builder.args((t) => ({
  classificationId: t.id({ description: `${describe.classificationId} Only products classified in it.` }),
  classificationGroupClassificationId: t.id({ description: 'Classification identifier of the classification group.' }),
  classificationGroupId: t.id({ description: 'Classification group identifier: only products in this group.' }),
}));
const pageArgs = builder.args((t) => ({
  languageId: t.string({ description: describe.languageId }),
  sorting: t.string({
    description:
      'Sort property such as productId or statusId, optionally prefixed by + (ascending) or - (descending); no sign is ascending.',
  }),
  page: t.int({ description: describe.page }),
  pageSize: t.int({ description: describe.pageSize }),
}));
const searchDescription = `Searches the products of one catalog, narrowed by classification and ordered by a property. ${resultDescription}`;

builder.queryField('catalogProducts', (t) =>
  t.field({
    type: 'JSON',
    description: searchDescription,
    args: { ...catalogArg, ...filterArgs, ...pageArgs },
    resolve: (_, args, { pim }, info) => pim.searchProducts(args, info),
  }),
);

/** A catalog as an entity; `products` is `catalogProducts` with its id filled in. */
const Catalog = builder.objectRef<{ catalogId: string }>('Catalog').implement({
  description: `A catalog of the PIM. ${entityDescription}`,
  fields: (t) => ({
    catalogId: t.exposeID('catalogId', { nullable: false, description: describe.catalogId }),
    products: t.field({
      type: 'JSON',
      description: `${searchDescription} The same as \`catalogProducts\` for this catalog.`,
      args: { ...filterArgs, ...pageArgs },
      resolve: ({ catalogId }, args, { pim }, info) => pim.searchProducts({ ...args, catalogId }, info),
    }),
  }),
});
asKeyedEntity(Catalog, ['catalogId']);

builder.objectField(ClassificationGroup, 'products', (t) =>
  t.field({
    type: 'JSON',
    description: `${searchDescription} The same as \`catalogProducts\` narrowed to this group (\`classificationGroupClassificationId\` and \`classificationGroupId\` from its key).`,
    args: { ...catalogArg, ...pageArgs },
    resolve: (group, args, { pim }, info) =>
      pim.searchProducts(
        {
          ...args,
          classificationGroupClassificationId: group.classificationId,
          classificationGroupId: group.classificationGroupId,
        },
        info,
        KEY_NAMES,
      ),
  }),
);

// Its refusals name the key field the client wrote, as `group` on the same representation does.
const KEY_NAMES = { classificationGroupClassificationId: 'classificationId' };
