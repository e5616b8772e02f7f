import { describe, expect, test } from "bun:test";
import { asWorksnapError, busy, internal, isDescriptorShortage, notFound } from "../../src/core/errors";
import { publicError, redactAbsolutePaths, relativizer } from "../../src/core/public-error";

const ROOT = "/home/dev/work/repo";
const errno = (code: string, message: string, path?: string) => Object.assign(new Error(message), { code, ...(path ? { path } : {}) });

describe("publicError", () => {
  test("paths under the root become repo-relative, in the message and in every string of the details", () => {
    const e = publicError(internal(`cannot take the lock ${ROOT}/.mcp/locks/worktree.lock`, { lock: `${ROOT}/.mcp/locks/worktree.lock`, nested: [{ at: `${ROOT}/src/a.ts` }], n: 3 }), {
      root: ROOT,
      foreignPaths: "keep",
    });
    expect(e).toEqual({
      code: "INTERNAL",
      message: "cannot take the lock .mcp/locks/worktree.lock",
      details: { lock: ".mcp/locks/worktree.lock", nested: [{ at: "src/a.ts" }], n: 3 },
    });
  });

  test("the root alone is '.'; a name that only starts like the root is not inside it (prefix attack)", () => {
    const rel = relativizer(ROOT);
    expect(rel(`serving ${ROOT}`)).toBe("serving .");
    expect(rel(`'${ROOT}/'`)).toBe("'.'");
    expect(rel(`${ROOT}x/secret`)).toBe(`${ROOT}x/secret`);
    expect(rel(`${ROOT}-backup/a`)).toBe(`${ROOT}-backup/a`);
    expect(rel(`a ${ROOT}//b and ${ROOT}/c`)).toBe("a b and c");
    expect(relativizer("/")("/etc/passwd")).toBe("/etc/passwd");
  });

  test("system errors: errno and path kept, made relative; EACCES is PERMISSION_DENIED, ENOENT NOT_FOUND", () => {
    const denied = publicError(errno("EACCES", `EACCES: permission denied, open '${ROOT}/locked/s.txt'`, `${ROOT}/locked/s.txt`), { root: ROOT, foreignPaths: "redact" });
    expect(denied).toEqual({ code: "PERMISSION_DENIED", message: "EACCES: permission denied, open 'locked/s.txt'", details: { errno: "EACCES", path: "locked/s.txt" } });
    expect(publicError(errno("ENOENT", "ENOENT: x", `${ROOT}/a`), { root: ROOT, foreignPaths: "redact" }).code).toBe("NOT_FOUND");
  });

  test("foreign text (system, git, INTERNAL) keeps only the last name of other absolute paths for a client; the CLI keeps them", () => {
    const git = internal("git status failed: warning: unable to access '/home/dev/.config/git/attributes': Permission denied", { exit: 128 });
    expect(publicError(git, { root: ROOT, foreignPaths: "redact" }).message).toBe("git status failed: warning: unable to access '…/attributes': Permission denied");
    expect(publicError(git, { root: ROOT, foreignPaths: "keep" }).message).toContain("/home/dev/.config/git/attributes");
    // worksnap's own, non-internal errors are left as written (they name repo paths only)
    expect(publicError(notFound("see https://example.com/a/b and 1/2 of src/a"), { root: ROOT, foreignPaths: "redact" }).message).toBe("see https://example.com/a/b and 1/2 of src/a");
    expect(redactAbsolutePaths("a (/x/y/z.ts:3:4) b")).toBe("a (…/z.ts:3:4) b");
  });

  test("an unknown failure is INTERNAL with its message and no stack (the stack used to be in details)", () => {
    const boom = new TypeError(`cannot read x of undefined in ${ROOT}/src/a.ts`);
    const e = publicError(boom, { root: ROOT, foreignPaths: "redact" });
    expect(e).toEqual({ code: "INTERNAL", message: "cannot read x of undefined in src/a.ts", details: {} });
    expect(JSON.stringify(asWorksnapError(boom).details)).not.toContain("stack");
  });

  test("out of file descriptors is BUSY, never INTERNAL: by errno, by message, or inside an INTERNAL git failure", () => {
    for (const err of [
      errno("EMFILE", "EMFILE: too many open files, posix_spawn 'git'"),
      errno("ENFILE", "ENFILE: file table overflow"),
      new Error("open failed: Too many open files"),
      internal("git ls-files failed: fatal: cannot open .git/index: Too many open files"),
    ]) {
      expect(isDescriptorShortage(err)).toBe(true);
      expect(publicError(err, { root: ROOT, foreignPaths: "redact" })).toMatchObject({ code: "BUSY", details: { reason: "descriptors" } });
    }
    expect(isDescriptorShortage(busy("held", { reason: "lock" }))).toBe(false);
    expect(isDescriptorShortage(notFound("too many open files in the name"))).toBe(false);
  });
});
