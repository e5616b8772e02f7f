/**
 * The review page as a person meets it: `dist/worksnap history review` started
 * on a repository (its printed URL read from stdout), and Debian's Chromium,
 * headless, driven by playwright-core with a new empty profile.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { requireBinary } from "./binary";

export const CHROMIUM = "/usr/bin/chromium";

export interface ReviewPage extends AsyncDisposable {
  /** The printed URL, token included. */
  url: string;
  origin: string;
  port: number;
  token: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
}

/**
 * `worksnap history review --root ROOT`, or with `command` another way to say
 * it (`["/path/to/mcpdiff", "review"]`); `opts.args` are added after the root,
 * `opts.env` over the test's environment.
 */
export async function startReviewPage(
  root: string,
  command: string[] = [requireBinary(), "history", "review"],
  opts: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ReviewPage> {
  const proc = Bun.spawn([...command, "--root", root, ...(opts.args ?? [])], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
  });
  let err = "";
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  const reader = proc.stdout.getReader();
  let out = "";
  for (;;) {
    const m = /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+))\n/.exec(out);
    if (m) {
      reader.releaseLock();
      return {
        url: m[1]!,
        origin: `http://127.0.0.1:${m[2]}`,
        port: Number(m[2]),
        token: m[3]!,
        stderr: () => err,
        [Symbol.asyncDispose]: async () => {
          proc.kill("SIGINT");
          await proc.exited;
        },
      };
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`history review exited before printing its URL (code ${await proc.exited}): ${out}${err}`);
    out += new TextDecoder().decode(value);
  }
}

export interface Browser extends AsyncDisposable {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested. */
  requests: string[];
}

export async function launchBrowser(opts: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "ws-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 },
    colorScheme: opts.colorScheme ?? "light",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: string[] = [];
  context.on("request", (r) => void requests.push(r.url()));
  return {
    context,
    page,
    requests,
    [Symbol.asyncDispose]: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
