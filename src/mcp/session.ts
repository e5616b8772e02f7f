import { withOwnLeases, type Workspace } from "../ops/workspace";
import { PIN_LIMIT, type Pins, PinStore } from "./pins";

export interface SessionOptions {
  /** A patch over a file that changed since the session read it: applied with a warning (default) or refused (`serve --stale-writes`). */
  staleWrites?: "warn" | "refuse";
  /** Pins kept per root (pins.ts). */
  pinLimit?: number;
}

/**
 * What the server remembers for one MCP session: made when a client connects
 * (a stdio connection is one session, an HTTP session one Mcp-Session-Id) and
 * dropped with it. Tools read and update it through their ToolContext;
 * nothing here outlives the process. Per root, a session has its own leases
 * (its view of the shared workspace) and its own pins (pins.ts).
 *
 * A session's own edit conversations (docs/decisions.md): the ones the server
 * started for its writes, and the ones it opened itself with an id of its
 * choosing (its first recorded write into that id was the conversation's first
 * entry). Only the session's first recorded write into a conversation decides;
 * an agent sees and undoes only the edits of its own conversations.
 */
export class McpSession {
  readonly staleWrites: "warn" | "refuse";
  private readonly pinStore: PinStore;
  /** The session's view of each root's workspace (its own leases), by root; as many as PinStore keeps pins for. */
  private readonly views = new Map<string, Workspace>();

  constructor(opts: SessionOptions = {}) {
    this.staleWrites = opts.staleWrites ?? "warn";
    this.pinStore = new PinStore(opts.pinLimit ?? PIN_LIMIT);
  }

  /** The session's pins for a root (the workspace's canonical root). */
  pins(root: string): Pins {
    return this.pinStore.forRoot(root);
  }

  /** The workspace as this session sees it: shared stores, its own leases. */
  view(ws: Workspace): Workspace {
    let view = this.views.get(ws.repo.root);
    if (view && view.blobs === ws.blobs) return view;
    view = withOwnLeases(ws);
    this.views.delete(ws.repo.root);
    this.views.set(ws.repo.root, view);
    for (const oldest of this.views.keys()) {
      if (this.views.size <= PinStore.MAX_ROOTS) break;
      this.views.delete(oldest);
    }
    return view;
  }

  /** Conversations this session wrote into, by last write (oldest first), with whether they are its own. */
  private readonly written = new Map<string, boolean>();
  /** The task this session started last (snap mode start): what task tools mean when they get no taskId. */
  private lastTask: string | undefined;

  /** Records a conversation id the server minted for a write of this session. */
  conversationStarted(id: string): void {
    this.written.delete(id);
    this.written.set(id, true);
  }

  /** True when `id` is one of this session's own conversations. */
  ownsConversation(id: string): boolean {
    return this.written.get(id) === true;
  }

  /** True when the session has recorded no write into `id` yet (its next one decides whether `id` is its own). */
  undecided(id: string): boolean {
    return !this.written.has(id);
  }

  /**
   * Records a write of this session into a conversation it named itself.
   * `opened`: the write was the conversation's first entry. Ownership is
   * decided by the first such write and kept afterwards.
   */
  conversationWritten(id: string, opened: boolean): void {
    const own = this.written.get(id) ?? opened;
    this.written.delete(id);
    this.written.set(id, own);
  }

  /** This session's own conversations, the least recently written first. */
  conversations(): string[] {
    return [...this.written].filter(([, own]) => own).map(([id]) => id);
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
