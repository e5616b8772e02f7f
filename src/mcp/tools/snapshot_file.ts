import * as v from "valibot";
import { readFile } from "../../ops/snapshot/file";
import { defineTool } from "../define-tool";
import { renderFile } from "../render/file";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeArg, modeBranch, withMode, readOnly, snapshotIdArg } from "./common";
import description from "./snapshot_file.txt" with { type: "text" };

const lineArg = (what: string) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description(what)));

export const snapshotFile = defineTool({
  name: "snapshot_file",
  description,
  args: v.strictObject({
    mode: v.optional(modeArg),
    path: v.string(),
    snapshot_id: v.optional(snapshotIdArg),
    lease_id: v.optional(leaseIdArg),
    start_line: lineArg("1-based."),
    end_line: lineArg("Inclusive."),
  }),
  output: hybridOutput(
    {
      path: { type: "string" },
      blob: { type: "string" },
      size: { type: "integer" },
      type: { type: "string", enum: ["file", "symlink"] },
      encoding: { type: "string", enum: ["utf8", "base64"] },
      content: { type: "string" },
      start_line: { type: "integer" },
      end_line: { type: "integer" },
      total_lines: { type: "integer" },
      truncated: { type: "boolean" },
      resolved_path: { type: "string" },
    },
    ["path", "size", "encoding", "content", "truncated"],
  ),
  annotations: readOnly("Read file"),
  branch: modeBranch,
  run: async (args, ctx) => {
    const pins = ctx.session.pins(ctx.ws.repo.root);
    return { ...(await readFile(ctx.ws, { ...withMode(args), onShown: (f) => pins.merge([[f.path, f.blob]]) })) };
  },
  text: (out) => renderFile(out),
});
