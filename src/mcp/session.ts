/**
 * What the server remembers for one MCP session: made when a client connects
 * (a stdio connection is one session) and dropped with it. Tools read and
 * update it through their ToolContext; nothing here outlives the process.
 */
export class McpSession {
  /** Edit conversations the server started for this session's writes, in the order they were started. */
  private readonly started = new Set<string>();
  /** The task this session started last (snap mode start): what task tools mean when they get no taskId. */
  private lastTask: string | undefined;

  /** Records a conversation id the server minted for a write of this session. */
  conversationStarted(id: string): void {
    this.started.add(id);
  }

  /** True when the server minted `id` for a write of this session. */
  startedConversation(id: string): boolean {
    return this.started.has(id);
  }

  /** The conversations started in this session, oldest first. */
  conversations(): string[] {
    return [...this.started];
  }

  /** Records the task this session just started. */
  taskStarted(id: string): void {
    this.lastTask = id;
  }

  /** The task this session started last, if any (it may have ended since). */
  currentTask(): string | undefined {
    return this.lastTask;
  }
}
