// Compiles src/main.ts into the single executable dist/worksnap, with the native module (src/native/*.c)
// embedded when a C compiler is at hand. Without one the binary is built anyway and runs its TypeScript
// paths (`worksnap --version` says which).
import { mkdirSync } from "node:fs";
import { buildNative } from "./scripts/build-native.ts";
import { buildReviewPage } from "./scripts/build-page.ts";

const native = buildNative();
console.log(native.ok ? `built ${native.output} (${native.compiler})` : `note: native module not built: ${native.reason}; the binary uses its TypeScript paths`);

console.log(`built ${await buildReviewPage()}`);

mkdirSync("dist", { recursive: true });
const result = await Bun.build({
  entrypoints: ["src/main.ts", "src/repo/hash-worker.ts"],
  compile: { outfile: "dist/worksnap" },
  minify: { syntax: true, whitespace: true },
  sourcemap: "none",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log("built dist/worksnap");
