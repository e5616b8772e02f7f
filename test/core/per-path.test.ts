import { expect, test } from "bun:test";
import { join } from "node:path";

/** Runs `body` in a process of its own (the policy is decided once per process), with perPath and setPerPathPolicy in scope. */
function inFreshProcess(body: string): { out: string; code: number } {
  const mod = join(import.meta.dir, "../../src/core/per-path.ts");
  const script = `import { perPath, setPerPathPolicy } from ${JSON.stringify(mod)};\n${body}`;
  const r = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  return { out: r.stdout.toString().trim(), code: r.exitCode };
}

test("functions declared before the policy is decided get it when it is, those declared after at once, and the first decision stands", () => {
  const r = inFreshProcess(`
    const got = [];
    function early() {}
    const same = perPath(early);
    const first = setPerPathPolicy((fn) => got.push(fn.name));
    perPath(function late() {});
    const second = setPerPathPolicy(null);
    perPath(function later() {});
    console.log(JSON.stringify({ got, same: same === early, first, second }));
  `);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.out)).toEqual({ got: ["early", "late", "later"], same: true, first: true, second: false });
});
