import * as v from "valibot";
import { OUTCOMES, endTask } from "../../ops/task/end";
import { renderEnd } from "../../ops/task/render";
import description from "./snap_end.txt" with { type: "text" };
import { compactArg, wireTool } from "./task-common";
import { mutating } from "./common";

const count = (what: string) => v.optional(v.pipe(v.number(), v.description(what)));

export const snapEndTool = wireTool({
  name: "snap_end",
  description,
  args: v.strictObject({
    taskId: v.pipe(v.string(), v.description("Task ID to complete.")),
    outcome: v.optional(v.pipe(v.picklist(OUTCOMES), v.description("How the task ended."))),
    learnings: v.optional(v.pipe(v.array(v.string()), v.description("Key learnings from this task."))),
    survey: v.optional(
      v.pipe(
        v.strictObject({
          patterns_used: count("Count of patterns applied."),
          pitfalls_avoided: count("Count of pitfalls dodged."),
          helpfulness: count("Rating 1-5."),
          unhelpful_count: count("Count of unhelpful suggestions."),
        }),
        v.description("Optional self-assessment."),
      ),
    ),
    compact: compactArg,
  }),
  annotations: mutating("End the task", false),
  run: async (args, ctx) => renderEnd(await endTask(ctx.ws, { ...args, signal: ctx.signal })),
});
