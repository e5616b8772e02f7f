import { describe, expect, test } from "bun:test";
import type { WorksnapError } from "../../src/core/errors";
import { parseArgs, type ToolDef } from "../../src/mcp/define-tool";
import { snapshotGrepTool } from "../../src/mcp/tools/snapshot_grep";
import { snapshotList } from "../../src/mcp/tools/snapshot_list";
import { workspaceWriteFile } from "../../src/mcp/tools/workspace_write_file";

function refusal(def: ToolDef<any>, raw: unknown): WorksnapError {
  try {
    parseArgs(def, raw);
  } catch (e) {
    return e as WorksnapError;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe("validation errors read as plain sentences", () => {
  test("unknown argument, missing argument, wrong type, out of range: each named, in words a model can act on", () => {
    const unknown = refusal(snapshotList, { mode: "worktree", extra: 1 });
    expect(unknown.code).toBe("INVALID_ARGUMENT");
    expect(unknown.message).toStartWith("snapshot_list: unknown argument extra (the arguments are mode, snapshot_id, lease_id, path,");
    expect(unknown.details).toMatchObject({ arg: "extra" });

    expect(refusal(workspaceWriteFile, { mode: "worktree", content: "x" }).message).toBe("workspace_write_file: path is required");
    expect(refusal(workspaceWriteFile, { mode: "worktree", path: 3, content: "x" }).message).toBe("workspace_write_file: path must be a string, not 3");
    expect(refusal(snapshotList, { mode: "live" }).message).toBe('snapshot_list: mode must be one of "worktree", "snapshot", not "live"');
    expect(refusal(snapshotList, { mode: "worktree", limit: 5000 }).message).toBe("snapshot_list: limit must be at most 2000, not 5000");
    expect(refusal(snapshotList, { mode: "worktree", limit: 0 }).message).toBe("snapshot_list: limit must be at least 1, not 0");
    expect(refusal(snapshotList, { mode: "worktree", limit: 1.5 }).message).toBe("snapshot_list: limit must be a whole number, not 1.5");
    expect(refusal(snapshotList, { mode: "worktree", recursive: "yes" }).message).toBe('snapshot_list: recursive must be a boolean, not "yes"');
    expect(refusal(snapshotGrepTool, { mode: "worktree", pattern: "" }).message).toBe("snapshot_grep: pattern must not be empty");
    expect(refusal(snapshotGrepTool, { mode: "worktree", pattern: "x", paths: ["a", 2] }).message).toBe("snapshot_grep: paths[1] must be a string, not 2");
    expect(refusal(snapshotGrepTool, { mode: "worktree", pattern: "x", paths: "a" }).message).toBe('snapshot_grep: paths must be an array, not "a"');
    // several problems, every one named
    const many = refusal(workspaceWriteFile, { mode: "nope", bogus: true });
    expect(many.details.problems).toEqual([
      'mode must be one of "worktree", "snapshot", not "nope"',
      "path is required",
      "content is required",
      expect.stringMatching(/^unknown argument bogus /),
    ]);
    for (const p of many.details.problems as string[]) expect(p).not.toMatch(/Invalid|Expected|received/);
  });

  test("arguments that are not an object", () => {
    expect(refusal(snapshotList, "worktree").message).toBe('snapshot_list: the arguments must be an object, not "worktree"');
  });
});
