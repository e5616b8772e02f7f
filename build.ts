// Compiles src/main.ts into the single executable dist/worksnap.
import { mkdirSync } from "node:fs";

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
