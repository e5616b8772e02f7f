import * as v from "valibot";
import { learn } from "../../ops/task/learn";
import { LEARNING_TYPES } from "../../ops/task/memory-store";
import { renderLearn } from "../../ops/task/render";
import description from "./snap_learn.txt" with { type: "text" };
import { wireTool } from "./task-common";
import { mutating } from "./common";

export const snapLearnTool = wireTool({
  name: "snap_learn",
  description,
  args: v.strictObject({
    trigger: v.pipe(v.string(), v.description("What situation triggers this learning.")),
    action: v.pipe(v.string(), v.description("What to do when triggered.")),
    type: v.pipe(v.picklist(LEARNING_TYPES), v.description("Learning category.")),
  }),
  annotations: mutating("Capture a learning", false),
  run: async (args, ctx) => renderLearn((await learn(ctx.ws, { ...args, preferred: ctx.session.currentTask() })).learning),
});
