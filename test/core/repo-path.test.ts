import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { WorksnapError, asWorksnapError } from "../../src/core/errors";
import { NAME_MAX, PATH_MAX, ancestorsOf, isReservedPath, isWithin, parseRepoPath, type RepoPath } from "../../src/core/repo-path";

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

  test("a name over 255 bytes or a path over PATH_MAX is INVALID_ARGUMENT, counted in UTF-8 bytes", () => {
    expect(parseRepoPath("a".repeat(255))).toBe("a".repeat(255) as RepoPath);
    const long = rejects(`src/${"a".repeat(256)}`);
    expect(long.details).toMatchObject({ arg: "path", name_bytes: 256, limit: NAME_MAX });
    // 128 two-byte characters are 256 bytes, though only 128 UTF-16 units
    expect(rejects("é".repeat(128)).details.name_bytes).toBe(256);
    const deep = Array.from({ length: Math.ceil(PATH_MAX / 200) }, () => "d".repeat(199)).join("/");
    expect(rejects(deep).details).toMatchObject({ arg: "path", limit: PATH_MAX - 1 });
    expect(parseRepoPath(deep.slice(0, PATH_MAX - 1))).toBe(deep.slice(0, PATH_MAX - 1) as RepoPath);
  });

  test("ENAMETOOLONG from the file system is INVALID_ARGUMENT, never INTERNAL", () => {
    const e = asWorksnapError(Object.assign(new Error("ENAMETOOLONG: name too long, open '/somewhere/x'"), { code: "ENAMETOOLONG", path: "/somewhere/x" }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(JSON.stringify(e.toJSON())).not.toContain("/somewhere");
  });

  test(".GIT, .Git and other spellings a case-folding or normalising file system reads as .git are reserved", () => {
    for (const p of [".GIT", ".Git/config", ".gIt/hooks/pre-commit", ".MCP/blobs", ".Mcp", ".git.", ".git ", ".git::$INDEX_ALLOCATION", "GIT~1/config", "mcp~1", ".g\u200cit/config", "\ufeff.git", ".\u0047IT"]) {
      expect([p, isReservedPath(p)]).toEqual([p, true]);
    }
    // .git anywhere (a nested repository's hooks), .mcp only at the top
    expect(isReservedPath("vendor/lib/.git/hooks/post-checkout")).toBe(true);
    expect(isReservedPath("vendor/.GIT")).toBe(true);
    expect(isReservedPath("docs/.mcp/notes")).toBe(false);
    for (const p of [".github", ".gitignore", ".gitattributes", "git", "mcp", ".mcp-config", "digit/.gi", "gitx~1", ".gi"]) {
      expect([p, isReservedPath(p)]).toEqual([p, false]);
    }
  });

  test("the quick test of a segment never passes a name the folding reserves (property, against the folding written out)", () => {
    // the folding of isReservedPath, written out independently: HFS+-ignored code points dropped, NFC, lower case,
    // an alternate data stream cut off, trailing dots and spaces dropped, the 8.3 short names
    const fold = (seg: string) => {
      let n = seg.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, "").normalize("NFC").toLowerCase();
      if (n.includes(":")) n = n.slice(0, n.indexOf(":"));
      n = n.replace(/[. ]+$/, "");
      return n === "git~1" ? ".git" : n === "mcp~1" ? ".mcp" : n;
    };
    const reference = (p: string) => p.split("/").some((seg, i) => fold(seg) === ".git" || (i === 0 && fold(seg) === ".mcp"));
    const pieces = [".git", ".GIT", ".gIt", ".mcp", ".MCP", "git~1", "GIT~1", "mcp~1", "git", "mcp", ".", " ", ":", "~", "1", "g", "m", "i", "t", "x", "\u200c", "\ufeff", "\u0130", "\u212a", "\x0e", "main", "generated"];
    const segment = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 4 }).map((a) => a.join(""));
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 3 }), (segs) => {
        const p = segs.join("/");
        expect([p, isReservedPath(p)]).toEqual([p, reference(p)]);
      }),
      { numRuns: 5000 },
    );
  });

  test("ancestorsOf", () => {
    expect(ancestorsOf("a/b/c")).toEqual(["a", "a/b"] as RepoPath[]);
    expect(ancestorsOf("a")).toEqual([]);
  });
});
