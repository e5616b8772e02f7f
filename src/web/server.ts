/**
 * The local review page: an HTTP server on 127.0.0.1 (Bun.serve) that serves
 * the page (embedded in the binary, nothing fetched from elsewhere), its JSON
 * API (api.ts) and a stream of change notices. Every request passes the guard
 * (guard.ts) first.
 *
 * Live updates: agents record edits from other processes, so the server
 * polls the history's change stamp (a stat of each log and a listing of the
 * review records) while at least one page listens, and sends the new stamp
 * as a Server-Sent Event; the page then fetches the state again.
 */
import { invalidArgument, notFound } from "../core/errors";
import { randomId128 } from "../core/hash";
import type { HistoryStore } from "../ops/history/store";
import type { Workspace } from "../ops/workspace";
import { ReviewApi, errorResponse, json } from "./api";
import { PAGE_ASSETS } from "./assets";
import { checkRequest, SECURITY_HEADERS, sessionCookie, type Guard } from "./guard";

export interface ReviewServerOptions {
  ws: Workspace;
  store: HistoryStore;
  /** 0 (or omitted): a free port chosen by the system. */
  port?: number;
  /** How often the change stamp is read while a page listens (ms). */
  pollMs?: number;
}

export interface ReviewServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 15_000;

export function startReviewServer(opts: ReviewServerOptions): ReviewServer {
  const token = randomId128();
  const api = new ReviewApi(opts.ws, opts.store);
  const watch = new StampWatch(opts.store, opts.pollMs ?? 400);
  let guard: Guard | null = null;

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 60,
    // Never Bun's development error page (the stack, source lines and directory of the process) in an answer.
    development: false,
    // Bun shares a port between servers when development is off; a port in use must stay a refusal.
    reusePort: false,
    error: (err) => {
      process.stderr.write(`worksnap: the review page failed a request: ${(err as Error)?.stack ?? String(err)}\n`);
      return secure(errorResponse(err, opts.ws.repo.root));
    },
    fetch: async (req, srv) => {
      const url = new URL(req.url);
      const verdict = checkRequest(guard!, req, url);
      if (!verdict.ok) return secure(new Response(`${verdict.reason}\n`, { status: verdict.status, headers: { "content-type": "text/plain; charset=utf-8" } }));
      if (verdict.via === "query") {
        // The token leaves the address bar: the cookie carries it from here on.
        return secure(new Response(null, { status: 303, headers: { location: "/", "set-cookie": sessionCookie(guard!) } }));
      }
      if (url.pathname === "/api/events" && req.method === "GET") {
        srv.timeout(req, 0);
        return secure(watch.stream(req.signal));
      }
      return secure(await route(api, req, url));
    },
  });
  guard = { token, port: server.port! };
  return {
    url: `http://127.0.0.1:${server.port}/?token=${token}`,
    port: server.port!,
    stop: async () => {
      watch.close();
      await server.stop(true);
    },
  };
}

async function route(api: ReviewApi, req: Request, url: URL): Promise<Response> {
  const path = url.pathname;
  if (req.method === "GET") {
    const asset = PAGE_ASSETS[path];
    if (asset) return new Response(asset.body, { headers: { "content-type": asset.type } });
    if (path === "/api/state") return api.state();
    if (path.startsWith("/api/edits/")) {
      const id = decodedSegment(path.slice("/api/edits/".length));
      return id === null ? errorResponse(invalidArgument("the edit id in the address is not valid percent-encoding", {})) : api.edit(id);
    }
    return new Response("not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    return json({ error: { code: "INVALID_ARGUMENT", message: "the request body is not JSON", details: {} } }, 400);
  }
  if (path === "/api/preview") return api.preview(body);
  if (path === "/api/review") return api.review(body);
  if (path === "/api/recover") return api.recover(body);
  return errorResponse(notFound(`no such action ${path}`, { path }));
}

/** A percent-encoded path segment, or null when it is malformed (`%E0%A4%A`). */
function decodedSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function secure(res: Response): Response {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
  return res;
}

/** Polls the change stamp while anyone listens, and tells every listener when it moves. */
class StampWatch {
  private readonly listeners = new Set<(event: "stamp" | "problem", data: string) => void>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private last: string | null = null;
  private reading = false;

  constructor(
    private readonly store: HistoryStore,
    private readonly pollMs: number,
  ) {}

  stream(signal: AbortSignal): Response {
    const enc = new TextEncoder();
    let cleanup = () => undefined as void;
    const body = new ReadableStream<Uint8Array>({
      start: async (controller) => {
        const send = (text: string) => {
          try {
            controller.enqueue(enc.encode(text));
          } catch {
            cleanup();
          }
        };
        const onStamp = (event: "stamp" | "problem", data: string) => send(`event: ${event}\ndata: ${data.replace(/\n/g, " ")}\n\n`);
        const beat = setInterval(() => send(": keep-alive\n\n"), HEARTBEAT_MS);
        cleanup = () => {
          clearInterval(beat);
          this.listeners.delete(onStamp);
          if (this.listeners.size === 0) this.pause();
        };
        signal.addEventListener("abort", () => {
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
        send("retry: 1000\n\n");
        this.listeners.add(onStamp);
        if (this.last === null) this.last = await this.store.changeStamp();
        onStamp("stamp", this.last);
        this.resume();
      },
      cancel: () => cleanup(),
    });
    return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" } });
  }

  close(): void {
    this.pause();
    this.listeners.clear();
  }

  private resume(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.poll(), this.pollMs);
  }

  private pause(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.last = null;
  }

  private async poll(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const stamp = await this.store.changeStamp();
      if (stamp !== this.last) {
        this.last = stamp;
        for (const l of this.listeners) l("stamp", stamp);
      }
    } catch (err) {
      // The page says so; the next poll tries again.
      for (const l of this.listeners) l("problem", `the history could not be read: ${(err as Error).message}`);
    } finally {
      this.reading = false;
    }
  }
}
