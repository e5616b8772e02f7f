import { describe, expect, test } from "bun:test";
import { readGitState } from "../../src/repo/fingerprint";
import { openRoot } from "../../src/repo/root";
import { recalledState, rememberState, stateEntries } from "../../src/repo/state-memory";
import { tmpRepo } from "../helpers/tmp-repo";

describe("state memory", () => {
  test("a git state read is remembered by its status_hash, as path -> status letters (renames name both paths; an untracked directory once)", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("old.txt", "o\n");
    repo.commit();
    repo.write("a.txt", "A\n");
    repo.git("mv", "old.txt", "new.txt");
    repo.write("build/x.js", "x\n");
    repo.write("build/y.js", "y\n");
    const state = await readGitState(openRoot(repo.root));
    const record = recalledState(state.fingerprint.status_hash);
    expect(record?.kind).toBe("git");
    expect(Object.fromEntries(stateEntries(record!))).toEqual({ "a.txt": " M", "new.txt": "R ", "old.txt": "R ", "build/": "??" });
  });

  test("a plain listing: path -> mode, size and mtime; a path with spaces stays whole", () => {
    rememberState("h-plain", { kind: "plain", listing: ["100644 3 17 a b.txt", "100755 10 18 bin/run", ""].join("\u0000") });
    expect(Object.fromEntries(stateEntries(recalledState("h-plain")!))).toEqual({ "a b.txt": "100644 3 17", "bin/run": "100755 10 18" });
  });

  test("bounded: the oldest states are forgotten, a state over 4 MiB is never kept", () => {
    rememberState("first", { kind: "plain", listing: "x" });
    for (let i = 0; i < 64; i++) rememberState(`s${i}`, { kind: "plain", listing: "y" });
    expect(recalledState("first")).toBeUndefined();
    expect(recalledState("s63")).toBeDefined();
    rememberState("huge", { kind: "plain", listing: "z".repeat((4 << 20) + 1) });
    expect(recalledState("huge")).toBeUndefined();
  });
});
