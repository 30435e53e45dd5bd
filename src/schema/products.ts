import { builder } from './builder.ts';
import { describe, resultDescription } from './arguments.ts';

builder.queryField('catalogProducts', (t) =>
  t.field({
    type: 'JSON',
    description: `Searches the products of one catalog, narrowed by classification and ordered by a property. ${resultDescription}`,
    args: {
      catalogId: t.arg.id({ required: true, description: 'Catalog identifier.' }),
      classificationId: t.arg.id({ description: `${describe.classificationId} Only products classified in it.` }),
      classificationGroupClassificationId: t.arg.id({
        description: 'Classification identifier of the classification group.',
      }),
      classificationGroupId: t.arg.id({ description: 'Classification group identifier: only products in this group.' }),
      languageId: t.arg.string({ description: describe.languageId }),
      sorting: t.arg.string({
        description:
          'Sort property such as productId or statusId, optionally prefixed by + (ascending) or - (descending); no sign is ascending. Several may be comma-separated.',
      }),
      page: t.arg.int({ description: describe.page }),
      pageSize: t.arg.int({ description: describe.pageSize }),
    },
    resolve: (_, args, { pim }, info) => pim.searchProducts(args, info.path),
  }),
);
