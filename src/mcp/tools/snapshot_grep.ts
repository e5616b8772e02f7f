import * as v from "valibot";
import { snapshotGrep } from "../../ops/snapshot/grep";
import { defineTool } from "../define-tool";
import { renderGrep } from "../render/grep";
import { hybridOutput } from "../output-schema";
import { cursorArg } from "./sides-common";
import { leaseIdArg, modeArg, modeBranch, withMode, readOnly, snapshotIdArg, unreadableProps } from "./common";
import description from "./snapshot_grep.txt" with { type: "text" };

const globs = (what: string) => v.optional(v.pipe(v.array(v.string()), v.description(what)));
const intArg = (min: number, max: number, what: string) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max), v.description(what)));
const strings = { type: "array", items: { type: "string" } };

export const snapshotGrepTool = defineTool({
  name: "snapshot_grep",
  description,
  args: v.strictObject({
    mode: v.optional(modeArg),
    snapshot_id: v.optional(snapshotIdArg),
    lease_id: v.optional(leaseIdArg),
    pattern: v.pipe(v.string(), v.minLength(1), v.description("Regex within a line (ripgrep or JS syntax), or text with fixed_strings.")),
    fixed_strings: v.optional(v.boolean()),
    case_insensitive: v.optional(v.boolean()),
    paths: v.optional(v.pipe(v.array(v.string()), v.description("Files or directories; default all."))),
    include: globs('Globs; "*.ts" matches names at any depth, "src/**/*.ts" paths.'),
    exclude: globs("Globs to skip."),
    max_files: intArg(1, 1_000_000, "Files to search in this call."),
    max_matches: intArg(1, 2000, "Default 200."),
    context_lines: intArg(0, 10, "Lines around each match."),
    cursor: v.optional(cursorArg),
  }),
  output: hybridOutput(
    {
      matches: {
        type: "array",
        items: {
          type: "object",
          properties: {
            path: { type: "string" },
            line: { type: "integer" },
            col: { type: "integer" },
            text: { type: "string" },
            trimmed: { type: "object", properties: { before: { type: "integer" }, after: { type: "integer" } }, required: ["before", "after"] },
            before: strings,
            after: strings,
          },
          required: ["path", "line", "col", "text"],
        },
      },
      candidates: { type: "integer" },
      files_searched: { type: "integer" },
      files_matched: { type: "integer" },
      binary_skipped: { type: "integer" },
      matches_omitted: { type: "integer" },
      truncated: { type: "boolean" },
      cursor: { type: "string" },
      timed_out: { type: "boolean" },
      note: { type: "string" },
      ...unreadableProps,
    },
    ["matches", "candidates", "files_searched", "files_matched", "binary_skipped", "matches_omitted", "truncated"],
  ),
  annotations: readOnly("Search files"),
  branch: modeBranch,
  run: async (args, ctx) => {
    const pins = ctx.session.pins(ctx.ws.repo.root);
    return { ...(await snapshotGrep(ctx.ws, { ...withMode(args), signal: ctx.signal, onShown: (files) => pins.merge(files.map((f) => [f.path, f.blob] as const)) })) };
  },
  text: (out) => renderGrep(out),
});
