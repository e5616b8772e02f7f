import { describe, expect, test } from "bun:test";
import { WorksnapError } from "../../src/core/errors";
import { ancestorsOf, isReservedPath, isWithin, parseRepoPath, type RepoPath } from "../../src/core/repo-path";

function rejects(input: unknown): WorksnapError {
  try {
    parseRepoPath(input);
  } catch (e) {
    expect(e).toBeInstanceOf(WorksnapError);
    expect((e as WorksnapError).code).toBe("INVALID_ARGUMENT");
    return e as WorksnapError;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe("parseRepoPath (spec 1.2)", () => {
  test("normalises: src == src/ == ./src, . is the root, duplicate slashes collapse", () => {
    expect(parseRepoPath("src")).toBe("src" as RepoPath);
    expect(parseRepoPath("src/")).toBe("src" as RepoPath);
    expect(parseRepoPath("./src")).toBe("src" as RepoPath);
    expect(parseRepoPath("src//a/./b")).toBe("src/a/b" as RepoPath);
    expect(parseRepoPath(".")).toBe("." as RepoPath);
    expect(parseRepoPath("")).toBe("." as RepoPath);
    expect(parseRepoPath("./")).toBe("." as RepoPath);
  });

  test("rejects .., absolute paths, ~, NUL, backslashes and non-strings", () => {
    for (const bad of ["..", "../x", "a/../b", "a/..", "/etc/passwd", "/", "~", "~/x", "~root", "a\0b", "C:\\x", "c:/x", "a\\b", 5, null]) {
      rejects(bad);
    }
  });

  test("prefix attacks: a path that merely starts like the root or a dir is not inside it", () => {
    expect(isWithin("srcx/a", "src" as RepoPath)).toBe(false);
    expect(isWithin("src/a", "src" as RepoPath)).toBe(true);
    expect(isWithin("src", "src" as RepoPath)).toBe(true);
    expect(isWithin("anything", "." as RepoPath)).toBe(true);
  });

  test("keeps Unicode, spaces and newlines in names byte-exact", () => {
    expect(parseRepoPath("dir with space/naïve ☃/\u{1F600}.txt")).toBe("dir with space/naïve ☃/\u{1F600}.txt" as RepoPath);
    expect(parseRepoPath("a\nb")).toBe("a\nb" as RepoPath);
    expect(parseRepoPath("..a/b..")).toBe("..a/b.." as RepoPath);
  });

  test("the error names the argument and the input", () => {
    const e = rejects("../secret");
    expect(e.message).toContain("../secret");
    expect(e.details.arg).toBe("path");
  });

  test("reserved state directories", () => {
    expect(isReservedPath(".git")).toBe(true);
    expect(isReservedPath(".git/config")).toBe(true);
    expect(isReservedPath(".mcp/blobs")).toBe(true);
    expect(isReservedPath(".github/workflows")).toBe(false);
    expect(isReservedPath(".mcpx")).toBe(false);
  });

  test("ancestorsOf", () => {
    expect(ancestorsOf("a/b/c")).toEqual(["a", "a/b"] as RepoPath[]);
    expect(ancestorsOf("a")).toEqual([]);
  });
});
