import * as v from "valibot";
import { diffSnapshots, listTaskSnapshots } from "../../ops/task/fix";
import { renderDiff, renderList, renderRestore } from "../../ops/task/render";
import { restoreSnapshot } from "../../ops/task/restore";
import description from "./snap_fix.txt" with { type: "text" };
import { wireTool } from "./task-common";
import { mutating } from "./common";

export const snapFixTool = wireTool({
  name: "snap_fix",
  description,
  args: v.strictObject({
    action: v.optional(
      v.pipe(v.picklist(["list", "restore", "diff"]), v.description("Operation: list available, restore specific, or diff two snapshots.")),
      "list",
    ),
    id: v.optional(v.pipe(v.string(), v.description("Snapshot ID for restore/diff, or a task id (task_<n>) for the snapshot its start took."))),
    diffWith: v.optional(v.pipe(v.string(), v.description("Second snapshot ID for diff operation."))),
    dryRun: v.optional(v.pipe(v.boolean(), v.description("Preview restore without applying."))),
  }),
  annotations: mutating("Snapshots: list, diff, restore", true),
  run: async (args, ctx) => {
    switch (args.action) {
      case "list":
        return renderList(listTaskSnapshots(ctx.ws));
      case "diff":
        return renderDiff(await diffSnapshots(ctx.ws, { id: args.id, diffWith: args.diffWith, signal: ctx.signal }));
      case "restore": {
        const r = await restoreSnapshot(ctx.ws, { id: args.id, dryRun: args.dryRun, signal: ctx.signal });
        if (r.conversation !== undefined && r.minted) ctx.session.conversationStarted(r.conversation);
        return renderRestore(r);
      }
    }
  },
});
