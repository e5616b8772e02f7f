import * as v from "valibot";
import { reportViolation } from "../../ops/task/learn";
import { renderViolation } from "../../ops/task/render";
import description from "./snap_violation.txt" with { type: "text" };
import { wireTool } from "./task-common";
import { mutating } from "./common";

export const snapViolationTool = wireTool({
  name: "snap_violation",
  description,
  args: v.strictObject({
    type: v.pipe(v.string(), v.description("Violation type key (e.g., 'silent_catch', 'missing_auth_check').")),
    file: v.optional(v.pipe(v.string(), v.description("File where violation occurred."))),
    description: v.pipe(v.string(), v.description("What happened.")),
    prevention: v.optional(v.pipe(v.string(), v.description("How to prevent this in future."))),
    taskId: v.optional(v.pipe(v.string(), v.description("Associated task ID."))),
  }),
  annotations: mutating("Report a violation", false),
  run: async (args, ctx) => renderViolation(await reportViolation(ctx.ws, { ...args, preferred: ctx.session.currentTask() })),
});
