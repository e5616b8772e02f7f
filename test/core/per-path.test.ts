import { expect, test } from "bun:test";
import { join } from "node:path";

/** Runs `body` in a process of its own (the policy is decided once per process), with perPath and setPerPathPolicy in scope. */
function inFreshProcess(body: string): { out: string; code: number } {
  const mod = join(import.meta.dir, "../../src/core/per-path.ts");
  const script = `import { perPath, setPerPathPolicy } from ${JSON.stringify(mod)};\n${body}`;
  const r = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  return { out: r.stdout.toString().trim(), code: r.exitCode };
}

test("functions declared before the policy is decided get it when it is, those declared after at once, and the decision is taken once", () => {
  const r = inFreshProcess(`
    const got = [];
    function early() {}
    const same = perPath(early);
    setPerPathPolicy((fn) => got.push(fn.name));
    perPath(function late() {});
    let again = "no error";
    try { setPerPathPolicy(null); } catch (err) { again = err.message; }
    console.log(JSON.stringify({ got, same: same === early, again }));
  `);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.out)).toEqual({ got: ["early", "late"], same: true, again: "the per-path policy is decided once" });
});
