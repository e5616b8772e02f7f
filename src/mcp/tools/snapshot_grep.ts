import * as v from "valibot";
import { snapshotGrep } from "../../ops/snapshot/grep";
import { defineTool } from "../define-tool";
import { hybridOutput } from "../output-schema";
import { leaseIdArg, modeArg, modeBranch, readOnly, snapshotIdArg, unreadableProps } from "./common";
import description from "./snapshot_grep.txt" with { type: "text" };

const globs = (what: string) => v.optional(v.pipe(v.array(v.string()), v.description(what)));
const intArg = (min: number, max: number, what: string) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max), v.description(what)));
const strings = { type: "array", items: { type: "string" } };

export const snapshotGrepTool = defineTool({
  name: "snapshot_grep",
  description,
  args: v.strictObject({
    mode: modeArg,
    snapshot_id: v.optional(snapshotIdArg),
    lease_id: v.optional(leaseIdArg),
    pattern: v.pipe(v.string(), v.minLength(1), v.description("JavaScript regular expression (u flag), or literal text with fixed_strings.")),
    fixed_strings: v.optional(v.pipe(v.boolean(), v.description("Treat pattern as literal text."))),
    case_insensitive: v.optional(v.pipe(v.boolean(), v.description("Match regardless of case."))),
    paths: v.optional(v.pipe(v.array(v.string()), v.description('Files or directories to search (repo-relative); default the whole tree.'))),
    include: globs('Only files matching any of these globs; "*.ts" matches names at any depth, "src/**/*.ts" whole paths.'),
    exclude: globs("Skip files matching any of these globs (same rules as include)."),
    max_files: intArg(1, 1_000_000, "Search at most this many files in this call (default: no limit)."),
    max_matches: intArg(1, 2000, "Return at most this many matches (default 200)."),
    context_lines: intArg(0, 10, "Lines of context before and after each match (default 0)."),
    cursor: v.optional(v.pipe(v.string(), v.description("From a previous answer, to continue; repeat the same query with it."))),
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
  run: async (args, ctx) => ({ ...(await snapshotGrep(ctx.ws, { ...args, signal: ctx.signal })) }),
});
