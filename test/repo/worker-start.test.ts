/** A worker is started only with descriptors to spare: refused with EMFILE, never the process ended. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const FIXTURE = join(import.meta.dir, "..", "fixtures", "worker-start-starved.ts");

function starved(args: string[] = []): { code: number; out: string; err: string } {
  const r = Bun.spawnSync(["bash", "-c", `ulimit -n 64 && exec "$0" "$@"`, process.execPath, FIXTURE, ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe("startWorker", () => {
  test("out of descriptors: refused with EMFILE and the process goes on; under the margin still refused; with enough, a worker that answers", () => {
    const r = starved();
    expect(r.err).not.toContain("ran out of file descriptors");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ starved: false, short: false, started: true, answer: 42, refusals: ["EMFILE", "EMFILE"] });
  });

  test("the scenario it guards against: Bun ends the process when a worker's thread finds no descriptor", () => {
    const r = starved(["raw"]);
    expect(r.out).not.toContain("survived");
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("ran out of file descriptors");
  });
});
