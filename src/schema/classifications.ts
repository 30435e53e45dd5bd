import { builder } from './builder.ts';
import { describe, entityDescription, resultDescription } from './arguments.ts';
import { asKeyedEntity } from './representations.ts';

const groupArgs = builder.args((t) => ({
  levels: t.int({
    description:
      'Depth of subgroups returned. Absent (null): only the group itself; 0: all subgroups; n >= 1: n sublevels.',
  }),
  languageId: t.string({ description: describe.languageId }),
}));
const groupDescription = `Reads one classification group with its subgroups to the depth \`levels\` asks for; \`data\` lists the group first, then its descendants. ${resultDescription}`;

const listArgs = builder.args((t) => ({
  languageId: t.string({ description: describe.languageId }),
  page: t.int({ description: describe.page }),
  pageSize: t.int({ description: describe.pageSize }),
}));
const listDescription = `Lists the groups of one classification, page by page. ${resultDescription}`;

builder.queryField('classificationGroup', (t) =>
  t.field({
    type: 'JSON',
    description: groupDescription,
    args: {
      classificationId: t.arg.id({ required: true, description: describe.classificationId }),
      classificationGroupId: t.arg.id({ required: true, description: describe.classificationGroupId }),
      ...groupArgs,
    },
    resolve: (_, args, { pim }, info) => pim.getClassificationGroup(args, info),
  }),
);

builder.queryField('classificationGroups', (t) =>
  t.field({
    type: 'JSON',
    description: listDescription,
    args: { classificationId: t.arg.id({ required: true, description: describe.classificationId }), ...listArgs },
    resolve: (_, args, { pim }, info) => pim.listClassificationGroups(args, info),
  }),
);

/** A classification as an entity; its fields are `classificationGroups` and `classificationGroup` with its id filled in. */
const Classification = builder.objectRef<{ classificationId: string }>('Classification').implement({
  description: `A classification of the PIM. ${entityDescription}`,
  fields: (t) => ({
    classificationId: t.exposeID('classificationId', { nullable: false, description: describe.classificationId }),
    groups: t.field({
      type: 'JSON',
      description: `${listDescription} The same as \`classificationGroups\` for this classification.`,
      args: listArgs,
      resolve: ({ classificationId }, args, { pim }, info) =>
        pim.listClassificationGroups({ ...args, classificationId }, info),
    }),
    group: t.field({
      type: 'JSON',
      description: `${groupDescription} The same as \`classificationGroup\` in this classification.`,
      args: {
        classificationGroupId: t.arg.id({ required: true, description: describe.classificationGroupId }),
        ...groupArgs,
      },
      resolve: ({ classificationId }, args, { pim }, info) =>
        pim.getClassificationGroup({ ...args, classificationId }, info),
    }),
  }),
});
asKeyedEntity(Classification, ['classificationId']);

/** A classification group as an entity; `group` is `classificationGroup` with both ids filled in. */
export const ClassificationGroup = builder
  .objectRef<{ classificationId: string; classificationGroupId: string }>('ClassificationGroup')
  .implement({
    description: `A group of a classification. ${entityDescription}`,
    fields: (t) => ({
      classificationId: t.exposeID('classificationId', { nullable: false, description: describe.classificationId }),
      classificationGroupId: t.exposeID('classificationGroupId', {
        nullable: false,
        description: describe.classificationGroupId,
      }),
      group: t.field({
        type: 'JSON',
        description: `${groupDescription} The same as \`classificationGroup\` for this group.`,
        args: groupArgs,
        resolve: (key, args, { pim }, info) => pim.getClassificationGroup({ ...args, ...key }, info),
      }),
    }),
  });
asKeyedEntity(ClassificationGroup, ['classificationId', 'classificationGroupId']);
