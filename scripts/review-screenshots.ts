// Makes the review page's screenshots in docs/ (light and dark at 1280 px, and a narrow window): a demo
// repository edited by an agent through the compiled server (MCP SDK client), then `worksnap history review`
// in headless Chromium. Needs `npm run build` and Debian's chromium at /usr/bin/chromium.
//   node_modules/.bin/bun scripts/review-screenshots.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { chromium } from "playwright-core";

const ROOT = join(import.meta.dir, "..");
const BINARY = join(ROOT, "dist", "worksnap");
const DOCS = join(ROOT, "docs");

const FILES: Record<string, string> = {
  "src/cart.ts": `import { Money, round } from "./money";

export interface Line {
  sku: string;
  quantity: number;
  unitPrice: Money;
}

/** The cart's total before tax. */
export function subtotal(lines: Line[]): Money {
  let total = 0;
  for (const line of lines) total += line.quantity * line.unitPrice;
  return round(total);
}

export function itemCount(lines: Line[]): number {
  return lines.reduce((n, l) => n + l.quantity, 0);
}
`,
  "src/money.ts": `export type Money = number;

export function round(value: Money): Money {
  return Math.round(value * 100) / 100;
}
`,
  "scripts/report.py": `import json
import sys


def main(path):
    with open(path) as f:
        orders = json.load(f)
    total = sum(o["total"] for o in orders)
    print(f"{len(orders)} orders, {total:.2f} in total")


if __name__ == "__main__":
    main(sys.argv[1])
`,
  "README.md": "# Shop\n\nA small shop backend.\n",
};

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

async function agent(root: string): Promise<Client> {
  const client = new Client({ name: "demo-agent", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: BINARY, args: ["serve", "--root", root], stderr: "ignore" }));
  return client;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: Record<string, unknown>; content: { text: string }[] };
  if (r.isError) throw new Error(`${name}: ${r.content[0]?.text}`);
  return r.structuredContent;
}

async function demoHistory(root: string): Promise<void> {
  for (const [p, t] of Object.entries(FILES)) write(root, p, t);
  const b = await agent(root);
  const second = await call(b, "workspace_apply_patch", {
    mode: "worktree",
    patch: `--- a/scripts/report.py
+++ b/scripts/report.py
@@ -1,12 +1,16 @@
 import json
 import sys
 
 
-def main(path):
+def main(path, currency="EUR"):
+    """Prints how many orders there are and what they add up to."""
     with open(path) as f:
         orders = json.load(f)
-    total = sum(o["total"] for o in orders)
-    print(f"{len(orders)} orders, {total:.2f} in total")
+    if not orders:
+        print("no orders")
+        return
+    total = sum(o["total"] for o in orders if not o.get("refunded", False))
+    print(f"{len(orders)} orders, {total:.2f} {currency} in total")
 
 
 if __name__ == "__main__":
`,
  });
  await call(b, "workspace_move", { mode: "worktree", from: "src/money.ts", to: "src/lib/money.ts", mcp_conversation_id: second.mcp_conversation_id });
  await b.close();
  const a = await agent(root);
  const first = await call(a, "workspace_apply_patch", {
    mode: "worktree",
    patch: `--- a/src/cart.ts
+++ b/src/cart.ts
@@ -9,9 +9,15 @@
 /** The cart's total before tax. */
 export function subtotal(lines: Line[]): Money {
   let total = 0;
-  for (const line of lines) total += line.quantity * line.unitPrice;
+  for (const line of lines) {
+    if (line.quantity < 0) throw new RangeError(\`negative quantity for \${line.sku}\`);
+    total += line.quantity * line.unitPrice;
+  }
   return round(total);
 }
 
+/** Tax at \`rate\` (0.2 is 20 %), rounded to cents. */
+export const tax = (lines: Line[], rate = 0.2): Money => round(subtotal(lines) * rate);
+
 export function itemCount(lines: Line[]): number {
   return lines.reduce((n, l) => n + l.quantity, 0);
 }
`,
  });
  const conv = first.mcp_conversation_id as string;
  await call(a, "workspace_write_file", {
    mode: "worktree",
    path: "src/cart.test.ts",
    content: `import { expect, test } from "bun:test";
import { subtotal, tax } from "./cart";

const lines = [{ sku: "tea", quantity: 2, unitPrice: 3.5 }];

test("subtotal and tax", () => {
  expect(subtotal(lines)).toBe(7);
  expect(tax(lines)).toBe(1.4);
});
`,
    mcp_conversation_id: conv,
  });
  await call(a, "workspace_apply_patch", {
    mode: "worktree",
    patch: `--- a/README.md
+++ b/README.md
@@ -1,3 +1,7 @@
 # Shop
 
 A small shop backend.
+
+## Tax
+
+\`tax(lines, rate)\` gives the tax on a cart; the default rate is **20 %**.
`,
    mcp_conversation_id: conv,
  });
  await a.close();

}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "shop-"));
  const profile = mkdtempSync(join(tmpdir(), "review-shots-"));
  let server: Bun.Subprocess<"ignore", "pipe", "ignore"> | null = null;
  try {
    await demoHistory(root);
    // Some edits already reviewed, so every status shows.
    const status = Bun.spawnSync([BINARY, "history", "status", "--json", "--root", root]).stdout.toString();
    const entries = JSON.parse(status).entries as { edit_id: string; file_path: string }[];
    for (const [path, action] of [["README.md", "accept"], ["src/lib/money.ts", "reject"], ["scripts/report.py", "accept"]]) {
      const e = entries.find((x) => x.file_path === path)!;
      Bun.spawnSync([BINARY, "history", action!, e.edit_id, "--root", root]);
    }

    server = Bun.spawn([BINARY, "history", "review", "--port", "0", "--root", root], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
    const reader = server.stdout.getReader();
    let out = "";
    while (!/http:\/\/\S+/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the review page did not start: ${out}`);
      out += new TextDecoder().decode(value);
    }
    const url = /http:\/\/\S+/.exec(out)![0];

    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1280, height: 860 },
      deviceScaleFactor: 1,
    });
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    for (const [scheme, file, width, height] of [
      ["light", "review-page-light.png", 1280, 860],
      ["dark", "review-page-dark.png", 1280, 860],
      ["light", "review-page-narrow.png", 420, 860],
    ] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height });
      await page.goto(url);
      await page.waitForSelector(".card .diff");
      await page.waitForSelector('.live[data-state="on"]');
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(DOCS, file) });
      console.log(`wrote docs/${file}`);
    }
    await ctx.close();
  } finally {
    server?.kill("SIGINT");
    await server?.exited;
    rmSync(root, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

await main();
