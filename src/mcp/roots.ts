import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type ListRootsResult, ListRootsResultSchema, RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { busy, isMissingPath, notFound } from "../core/errors";
import { closeWorkspace, openWorkspace, type Workspace, type WorkspaceOptions } from "../ops/workspace";
import { primeStatusCopy } from "../repo/status-index";

/**
 * The workspaces a server process has open, one per root, shared by its
 * sessions (they share the stores, the lock and the edit history; each
 * session has its own leases and pins, session.ts). Closed together when the
 * server stops.
 */
export class WorkspacePool {
  private readonly byDir = new Map<string, Workspace>();
  /** Told when a pass of a workspace's grep index has indexed something (the idle collector collects after it). */
  onIndexed: () => void = () => undefined;

  /**
   * `onOpen`: told each workspace as it is opened (the server completes interrupted writes there); `index`: the
   * budgets of each workspace's grep index, built in the background (workspace.ts).
   */
  constructor(
    private readonly onOpen: (ws: Workspace) => void = () => undefined,
    private readonly index: WorkspaceOptions["index"] = undefined,
  ) {}

  /** The workspace of `dir` (opened on first use; a directory reached by two names is one workspace). */
  get(dir: string): Workspace {
    let key: string;
    try {
      key = realpathSync(dir);
    } catch (err) {
      // a descriptor shortage is not a missing root: it answers BUSY and the call runs again
      if (isMissingPath(err)) throw notFound(`root directory ${dir} does not exist`, { root: dir });
      throw err;
    }
    const known = this.byDir.get(key);
    if (known) return known;
    const ws = openWorkspace(key, { longLived: true, index: this.index });
    this.byDir.set(key, ws);
    this.onOpen(ws);
    if (ws.indexer) ws.indexer.onIndexed = () => this.onIndexed();
    ws.indexer?.kick();
    return ws;
  }

  /** Brings each open workspace's grep index up to date in the background (when the server is idle). */
  kickIndexers(): void {
    for (const ws of this.byDir.values()) ws.indexer?.kick();
  }

  /**
   * Runs `git status` once on each open workspace's new copy of git's index, if it has one no status has used
   * (repo/status-index.ts): git builds its untracked cache there while the server is idle, not in the next call.
   */
  primeStatuses(): void {
    for (const ws of this.byDir.values()) primeStatusCopy(ws.repo).catch(() => false);
  }

  closeAll(): void {
    for (const ws of this.byDir.values()) closeWorkspace(ws);
    this.byDir.clear();
  }
}

/** Sends a request to the client on behalf of the call being answered (over HTTP: on that call's stream). */
export type AskClient = (request: { method: "roots/list" }) => Promise<ListRootsResult>;

/** How long a client has to answer roots/list. */
const ROOTS_TIMEOUT_MS = 10_000;

/**
 * Which root a session works on (docs/decisions.md): `--root` when given;
 * else, when the client advertises the roots capability, its first `file://`
 * root, asked with roots/list on the session's first call and asked again
 * after `notifications/roots/list_changed`; else (no roots capability, or an
 * empty list) the directory the server was started in. A client whose roots
 * name no directory that exists gets NOT_FOUND on its calls, never another
 * tree.
 */
export class SessionRoot {
  private current: Promise<Workspace> | null = null;

  constructor(
    private readonly sdk: Server,
    private readonly pool: WorkspacePool,
    private readonly fixed: string | null,
    private readonly fallback: string,
    private readonly log: (line: string) => void,
  ) {
    sdk.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      if (this.fixed === null) this.current = null;
    });
  }

  /** The session's workspace now; `ask` sends roots/list to the client when the roots must be (re)learned. */
  workspace(ask: AskClient): Promise<Workspace> {
    if (this.fixed !== null) return Promise.resolve(this.pool.get(this.fixed));
    if (!this.sdk.getClientCapabilities()?.roots) return this.fallbackWorkspace();
    if (this.current === null) {
      const learning = this.learn(ask);
      this.current = learning;
      // a failure is answered to this call; the next call asks again
      learning.catch(() => {
        if (this.current === learning) this.current = null;
      });
    }
    return this.current;
  }

  /** unservableFallback of the start directory, asked once: it does not change while the server runs. */
  private fallbackRefused: string | null | undefined;

  /** The directory the server started in, unless that is a directory no one would mean (unservableFallback). */
  private fallbackWorkspace(): Promise<Workspace> {
    if (this.fallbackRefused === undefined) this.fallbackRefused = unservableFallback(this.fallback);
    const why = this.fallbackRefused;
    if (why === null) return Promise.resolve(this.pool.get(this.fallback));
    return Promise.reject(
      notFound(`no repository to serve: the server was started in ${why}, with no --root, and the client names no root; add --root /path/to/the/repository to the server's arguments in the host's configuration`, {
        reason: "no_root",
      }),
    );
  }

  private async learn(ask: AskClient): Promise<Workspace> {
    let listed: ListRootsResult;
    try {
      listed = await ask({ method: "roots/list" });
    } catch (err) {
      throw busy(`the client did not answer roots/list (${err instanceof Error ? err.message : String(err)}); retry, or start the server with --root`, {
        reason: "roots",
      });
    }
    const roots = listed.roots.map((r) => r.uri);
    if (roots.length === 0) {
      this.log(`the client lists no roots; serving ${this.fallback}`);
      return this.fallbackWorkspace();
    }
    for (const uri of roots) {
      const dir = fileDir(uri);
      if (dir === null) continue;
      try {
        const ws = this.pool.get(dir);
        this.log(`serving the client's root ${ws.repo.root}${roots.length > 1 ? ` (the first of ${roots.length} roots)` : ""}`);
        return ws;
      } catch {
        // not a directory that exists: the next root
      }
    }
    throw notFound(`none of the client's roots is a directory on this machine (${roots.slice(0, 5).join(", ")}); start the server with --root`, { roots: roots.slice(0, 5) });
  }
}

/**
 * Why the directory a server started in cannot stand in for a repository no
 * one named, or null when it can: hosts start servers in `/` (Claude Desktop
 * on macOS) or in the home directory, and serving those would capture,
 * search and write state (`.mcp/`) across the whole disk or home. Named
 * explicitly (`--root`, a client's root) any directory is served.
 */
export function unservableFallback(dir: string): string | null {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return null; // opening it says what is wrong
  }
  if (real === "/") return "the file system's root";
  let home: string | null = null;
  try {
    home = realpathSync(homedir());
  } catch {
    // no home directory to compare with
  }
  if (home !== null && real === home && !existsSync(join(real, ".git"))) return "the home directory";
  return null;
}

/** `file:///a/b` -> `/a/b`; null for any other scheme or a malformed URI. */
export function fileDir(uri: string): string | null {
  if (!uri.startsWith("file:")) return null;
  try {
    return fileURLToPath(uri);
  } catch {
    return null;
  }
}

/** What a request handler's extra offers to ask the client something (the SDK's RequestHandlerExtra, any request type). */
export interface RequestContext {
  signal: AbortSignal;
  // biome-ignore lint: the SDK's generic signature differs per request type
  sendRequest: (request: any, resultSchema: any, options?: { timeout?: number; signal?: AbortSignal }) => Promise<unknown>;
}

/** `ask` for a request handler: roots/list sent as part of the request being answered (related to it, cancelled with it). */
export function askWith(extra: RequestContext): AskClient {
  return async (req) => (await extra.sendRequest(req, ListRootsResultSchema, { timeout: ROOTS_TIMEOUT_MS, signal: extra.signal })) as ListRootsResult;
}
