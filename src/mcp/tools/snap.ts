import * as v from "valibot";
import { runCheck } from "../../ops/task/check";
import { taskContext } from "../../ops/task/context";
import { renderCheck, renderContext, renderStart } from "../../ops/task/render";
import { startTask } from "../../ops/task/start";
import { mutating } from "./common";
import description from "./snap.txt" with { type: "text" };
import { compactArg, progressOf, wireTool } from "./task-common";

export const snapTool = wireTool({
  name: "snap",
  description,
  args: v.strictObject({
    mode: v.pipe(
      v.picklist(["start", "check", "context"]),
      v.description("Operation mode: 'start' begins a task, 'check' validates code, 'context' gets current state."),
    ),
    task: v.optional(v.pipe(v.string(), v.description("Task title or goal (required for mode: start)."))),
    files: v.optional(v.pipe(v.array(v.string()), v.description("Primary files involved in the task."))),
    keywords: v.optional(v.pipe(v.array(v.string()), v.description("Keywords or tags for pattern matching."))),
    compact: compactArg,
  }),
  annotations: mutating("Task: start, check, context", false),
  run: async (args, ctx) => {
    const preferred = ctx.session.currentTask();
    switch (args.mode) {
      case "start": {
        const r = await startTask(ctx.ws, { task: args.task, files: args.files, keywords: args.keywords, signal: ctx.signal, onProgress: progressOf(ctx, "capturing the task snapshot") });
        ctx.session.taskStarted(r.task.id);
        return renderStart(r);
      }
      case "check":
        return renderCheck(await runCheck(ctx.ws, { mode: "full", files: args.files, preferred, signal: ctx.signal, onProgress: progressOf(ctx, "checking") }));
      case "context":
        return renderContext(await taskContext(ctx.ws, { preferred, files: args.files, keywords: args.keywords, signal: ctx.signal }));
    }
  },
});
