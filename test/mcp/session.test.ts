import { describe, expect, test } from "bun:test";
import type { ToolContext } from "../../src/mcp/define-tool";
import { McpSession } from "../../src/mcp/session";
import { runMutationTool } from "../../src/mcp/tools/workspace-common";
import { writeFileOp, type WriteFileArgs } from "../../src/ops/mutate/write-file";
import { createSnapshot } from "../../src/ops/snapshot/create";
import { wsOf } from "../helpers/workspace";
import { tmpRepo } from "../helpers/tmp-repo";

describe("McpSession", () => {
  test("owns the conversations the server started for its writes and those its own first write opened; not one it joined", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const session = new McpSession();
    const other = new McpSession();
    const ctx: ToolContext = { ws, session, signal: new AbortController().signal, progress: () => undefined };
    const otherCtx: ToolContext = { ...ctx, session: other };
    const write = (c: ToolContext, path: string, conv?: string) =>
      runMutationTool<WriteFileArgs>({ mode: "worktree", path, content: `${path}\n`, ...(conv ? { mcp_conversation_id: conv } : {}) }, c, writeFileOp);

    const first = await write(ctx, "a.txt");
    const minted = first.mcp_conversation_id as string;
    expect(minted).toMatch(/^conv_\d+_[0-9a-f]{12}$/);
    expect(session.ownsConversation(minted)).toBe(true);

    // A conversation named by the client: its first entry came from this session, so it is this session's.
    await write(ctx, "b.txt", "conv_named_by_client");
    expect(session.ownsConversation("conv_named_by_client")).toBe(true);
    // Another session naming it later joins it without owning it, and stays out even after more writes.
    await write(otherCtx, "c.txt", "conv_named_by_client");
    await write(otherCtx, "d.txt", "conv_named_by_client");
    expect(other.ownsConversation("conv_named_by_client")).toBe(false);
    expect(other.ownsConversation(minted)).toBe(false);
    expect(other.conversations()).toEqual([]);

    // Ordered by the last write, oldest first.
    await write(ctx, "e.txt", minted);
    expect(session.conversations()).toEqual(["conv_named_by_client", minted]);
    expect(new McpSession().ownsConversation(minted)).toBe(false);
  });

  test("a snapshot-mode write records nothing and decides nothing", async () => {
    await using repo = await tmpRepo();
    repo.write("x.txt", "x\n");
    using ws = wsOf(repo);
    const session = new McpSession();
    const ctx: ToolContext = { ws, session, signal: new AbortController().signal, progress: () => undefined };
    const snap = await createSnapshot(ws, { paths: ["."] });
    await runMutationTool<WriteFileArgs>({ mode: "snapshot", snapshot_id: snap.snapshot_id, path: "y.txt", content: "y\n", mcp_conversation_id: "later" }, ctx, writeFileOp);
    expect(session.undecided("later")).toBe(true);
    expect(session.conversations()).toEqual([]);
  });
});
