/**
 * `worksnap history review`: the local review page (src/web). Prints the
 * page's URL (with its token) and serves until interrupted; opens a browser
 * only when asked.
 */
import { invalidArgument } from "../../core/errors";
import type { HistoryStore } from "../../ops/history/store";
import type { Workspace } from "../../ops/workspace";
import { startReviewServer, type ReviewServer } from "../../web/server";
import { intFlag } from "../args";
import { listenError } from "../listen-error";
import { printJson, stderr, stdout } from "../output";

export async function cmdReviewPage(ws: Workspace, store: HistoryStore, flags: Record<string, unknown>): Promise<number> {
  const port = intFlag(flags.port, "port") ?? 0;
  if (port < 0 || port > 65535) throw invalidArgument("--port must be from 0 to 65535 (0: any free port)", { port });
  let server: ReviewServer;
  try {
    server = startReviewServer({ ws, store, port });
  } catch (err) {
    throw listenError(err, "127.0.0.1", port, "pick another with --port, or omit it") ?? err;
  }
  if (flags.json) printJson({ url: server.url, port: server.port });
  else stdout(`Review page: ${server.url}\n`);
  stderr("Serving the edit history on 127.0.0.1 only; the URL's token is the key. Press Ctrl+C to stop.\n");
  if (flags.open) openBrowser(server.url);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.stop();
  return 0;
}

function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : ["xdg-open", url];
  try {
    const child = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    child.unref();
  } catch {
    stderr(`Could not start a browser (${cmd[0]}); open the URL above yourself.\n`);
  }
}
