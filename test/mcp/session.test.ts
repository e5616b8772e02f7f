import { describe, expect, test } from "bun:test";
import type { ToolContext } from "../../src/mcp/define-tool";
import { McpSession } from "../../src/mcp/session";
import { runMutationTool } from "../../src/mcp/tools/workspace-common";
import { writeFileOp, type WriteFileArgs } from "../../src/ops/mutate/write-file";
import { wsOf } from "../helpers/workspace";
import { tmpRepo } from "../helpers/tmp-repo";

describe("McpSession", () => {
  test("remembers the conversations the server started for the session's writes, not the ones a call named", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const session = new McpSession();
    const ctx: ToolContext = { ws, session, signal: new AbortController().signal, progress: () => undefined };

    const first = await runMutationTool<WriteFileArgs>({ mode: "worktree", path: "a.txt", content: "one\n" }, ctx, writeFileOp);
    const minted = first.mcp_conversation_id as string;
    expect(minted).toMatch(/^conv_\d+_[0-9a-f]{12}$/);
    expect(session.startedConversation(minted)).toBe(true);

    const named = await runMutationTool<WriteFileArgs>({ mode: "worktree", path: "b.txt", content: "two\n", mcp_conversation_id: "conv_named_by_client" }, ctx, writeFileOp);
    expect(named.mcp_conversation_id).toBe("conv_named_by_client");
    expect(session.startedConversation("conv_named_by_client")).toBe(false);

    const second = await runMutationTool<WriteFileArgs>({ mode: "worktree", path: "c.txt", content: "three\n" }, ctx, writeFileOp);
    expect(session.conversations()).toEqual([minted, second.mcp_conversation_id as string]);
    expect(new McpSession().startedConversation(minted)).toBe(false);
  });
});
