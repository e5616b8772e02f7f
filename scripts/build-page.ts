// Bundles the review page's script (src/web/page/main.ts and what it imports) for the browser into
// build/web/review-page.js, which src/web/assets.ts embeds in the binary as text.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
export const PAGE_SCRIPT = join(ROOT, "build", "web", "review-page.js");

export async function buildReviewPage(): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src", "web", "page", "main.ts")],
    target: "browser",
    format: "esm",
    minify: true,
    sourcemap: "none",
  });
  if (!result.success) throw new Error(`the review page did not build:\n${result.logs.map(String).join("\n")}`);
  const text = await result.outputs[0]!.text();
  mkdirSync(join(ROOT, "build", "web"), { recursive: true });
  writeFileSync(PAGE_SCRIPT, text);
  return PAGE_SCRIPT;
}

if (import.meta.main) console.log(`built ${await buildReviewPage()}`);
