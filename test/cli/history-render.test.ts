/** The history renderers: golden human output, and the fast --json that must equal canonical JSON byte for byte. */
import { describe, expect, test } from "bun:test";
import { canonicalJson } from "../../src/core/canonical-json";
import { colourDiff, renderReview, renderShow, renderStatus, statusJson } from "../../src/cli/commands/history-render";
import type { StatusResult } from "../../src/ops/history/query";
import type { LogEntry } from "../../src/ops/history/types";
import { expectGolden } from "../helpers/golden";

const plain = { on: false, paint: (_c: string, s: string) => s };
const coloured = { on: true, paint: (c: string, s: string) => `\x1b[${c}m${s}\x1b[0m` };

function entry(i: number, over: Partial<LogEntry> = {}): LogEntry {
  return {
    edit_id: `${String(i).repeat(8)}-1111-4111-8111-111111111111`,
    conversation_id: "conv_1767225600000_0123456789ab",
    tool_call_index: i,
    timestamp: `2026-01-01T00:00:0${i}.00000${i}Z`,
    operation: "edit",
    file_path: "src/app.ts",
    source_path: null,
    tool_name: "edit_file_diff",
    status: "pending",
    diff_file: `diffs/conv_1767225600000_0123456789ab/${i}.diff`,
    checkpoint_file: null,
    hash_before: "a".repeat(64),
    hash_after: "b".repeat(64),
    ...over,
  };
}

const result: StatusResult = {
  total: 4,
  entries: [
    entry(1),
    entry(2, { operation: "replace", status: "accepted", tool_name: "write_file" }),
    entry(3, { operation: "move", source_path: "src/app.ts", file_path: "lib/日本語 app.ts", status: "rejected", tool_name: "move_file" }),
    entry(4, { operation: "delete", file_path: "old.txt", conversation_id: "mine", diff_file: null, hash_after: null, tool_name: "delete_file" }),
  ],
  interrupted: [{ review_id: "99999999-2222-4222-8222-222222222222", action: "reject", timestamp: "2026-01-01T00:01:00.000000Z", paths: ["src/app.ts"] }],
};

describe("history renderers", () => {
  test("status table (golden), plain and coloured", () => {
    expectGolden("history/status.txt", renderStatus(result, plain));
    const c = renderStatus(result, coloured);
    expect(c).toContain("\x1b[31mrejected");
    expect(c).toContain("\x1b[32maccepted");
    expect(c.replace(/\x1b\[[0-9;]*m/g, "")).toBe(renderStatus(result, plain));
  });

  test("status --json is canonical JSON", () => {
    expect(statusJson(result)).toBe(`${canonicalJson(result)}\n`);
    expect(statusJson({ total: 0, entries: [], interrupted: [] })).toBe(`${canonicalJson({ total: 0, entries: [], interrupted: [] })}\n`);
  });

  test("show and review summaries (golden)", () => {
    const diff = "diff --git a/src/app.ts b/src/app.ts\n--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
    expectGolden("history/show.txt", renderShow({ kind: "edit", id: result.entries[0]!.edit_id, edits: [{ entry: result.entries[0]!, diff }] }, plain));
    expect(colourDiff(diff, coloured)).toContain("\x1b[31m-two\x1b[0m\n\x1b[32m+TWO\x1b[0m");
    expectGolden(
      "history/review.txt",
      renderReview(
        {
          action: "reject",
          review_id: "r",
          changed: [
            { edit_id: result.entries[0]!.edit_id, conversation_id: "c", operation: "edit", file_path: "src/app.ts", source_path: null, from: "pending", to: "rejected" },
            { edit_id: result.entries[2]!.edit_id, conversation_id: "c", operation: "move", file_path: "lib/b.ts", source_path: "src/app.ts", from: "accepted", to: "rejected" },
          ],
          cascaded: [result.entries[2]!.edit_id],
          still_rejected: [],
          unchanged: [],
          files: [
            { path: "src/app.ts", action: "written", hash: "c".repeat(64) },
            { path: "lib/b.ts", action: "deleted", hash: null },
          ],
          discarded: ["src/app.ts"],
          recovered: [],
        },
        plain,
      ),
    );
  });
});
