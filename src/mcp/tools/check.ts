import * as v from "valibot";
import { CHECK_MODES, runCheck } from "../../ops/task/check";
import { renderCheck } from "../../ops/task/render";
import description from "./check.txt" with { type: "text" };
import { compactArg, progressOf, wireTool } from "./task-common";

export const checkTool = wireTool({
  name: "check",
  description,
  args: v.strictObject({
    mode: v.pipe(
      v.picklist(CHECK_MODES),
      v.description("Check mode. Groups: Quick (quick, patterns), Full (full, build, test), Analysis (impact, circular, docs, all)."),
    ),
    taskId: v.optional(v.pipe(v.string(), v.description("Task ID from snap start. If omitted, uses current context."))),
    files: v.optional(v.pipe(v.array(v.string()), v.description("Specific files to check. If omitted, checks task scope."))),
    compact: compactArg,
  }),
  annotations: { title: "Check the task's changes", readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, ctx) =>
    renderCheck(
      await runCheck(ctx.ws, {
        mode: args.mode,
        taskId: args.taskId,
        files: args.files,
        preferred: ctx.session.currentTask(),
        signal: ctx.signal,
        onProgress: progressOf(ctx, "checking"),
      }),
    ),
});
