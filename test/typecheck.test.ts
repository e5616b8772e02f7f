import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

// The sources and the tests compile under the strict tsconfig: a type error
// anywhere fails the suite, not only `npm run typecheck`.
// The review page's script (src/web/page) compiles under its own tsconfig, with the browser's DOM types.
for (const [what, project] of [
  ["src, test, bench and scripts", ROOT],
  ["the review page's browser code", join(ROOT, "src", "web", "page")],
] as const) {
  test(`tsc --noEmit passes on ${what}`, () => {
    const r = Bun.spawnSync([join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", project], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const out = `${r.stdout.toString()}${r.stderr.toString()}`;
    expect(out).toBe("");
    expect(r.exitCode).toBe(0);
  });
}
