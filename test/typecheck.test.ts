import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

// The sources and the tests compile under the strict tsconfig: a type error
// anywhere fails the suite, not only `npm run typecheck`.
test("tsc --noEmit passes on src, test, bench and scripts", () => {
  const r = Bun.spawnSync([join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", ROOT], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const out = `${r.stdout.toString()}${r.stderr.toString()}`;
  expect(out).toBe("");
  expect(r.exitCode).toBe(0);
});
