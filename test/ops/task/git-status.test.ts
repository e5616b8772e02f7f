import { describe, expect, test } from "bun:test";
import { statusPaths } from "../../../src/ops/task/git-status";

const status = (...records: string[]) => new TextEncoder().encode(records.map((r) => `${r}\0`).join(""));

describe("task status paths", () => {
  test("at the top of the work tree: every path as git names it", () => {
    const s = statusPaths(status(" M app/a.ts", "?? notes.md", "?? tmp/", " D gone.ts"));
    expect(s).toEqual({ present: ["app/a.ts", "notes.md", "tmp"], untrackedDirs: ["tmp"], absent: ["gone.ts"] });
  });

  test("a root below the top: only its paths, named from it; a root inside an untracked directory is untracked whole", () => {
    const raw = status(" M app/a.ts", " M lib/b.ts", "?? app/new/", " D app/gone.ts", "R  app/to.ts", "app/from.ts", "R  app/in.ts", "lib/out.ts");
    expect(statusPaths(raw, "app/")).toEqual({ present: ["a.ts", "new", "to.ts", "in.ts"], untrackedDirs: ["new"], absent: ["gone.ts", "from.ts"] });
    expect(statusPaths(status("?? fresh/"), "fresh/pkg/")).toEqual({ present: ["."], untrackedDirs: ["."], absent: [] });
  });
});
