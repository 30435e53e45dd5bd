import { builder } from './builder.ts';
import { describe, resultDescription } from './arguments.ts';

builder.queryField('classificationGroup', (t) =>
  t.field({
    type: 'JSON',
    description: `Reads one classification group with its subgroups to the depth \`levels\` asks for; \`data\` lists the group first, then its descendants. ${resultDescription}`,
    args: {
      classificationId: t.arg.id({ required: true, description: describe.classificationId }),
      classificationGroupId: t.arg.id({ required: true, description: 'Classification group identifier.' }),
      levels: t.arg.int({
        description:
          'Depth of subgroups returned. Absent (null): only the group itself; 0: all subgroups; n >= 1: n sublevels.',
      }),
      languageId: t.arg.string({ description: describe.languageId }),
    },
    resolve: (_, args, { pim }, info) => pim.getClassificationGroup(args, info.path),
  }),
);

builder.queryField('classificationGroups', (t) =>
  t.field({
    type: 'JSON',
    description: `Lists the groups of one classification, page by page. ${resultDescription}`,
    args: {
      classificationId: t.arg.id({ required: true, description: describe.classificationId }),
      languageId: t.arg.string({ description: describe.languageId }),
      page: t.arg.int({ description: describe.page }),
      pageSize: t.arg.int({ description: describe.pageSize }),
    },
    resolve: (_, args, { pim }, info) => pim.listClassificationGroups(args, info.path),
  }),
);
