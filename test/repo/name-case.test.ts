import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caseKey, foldsCase, spelledOnDisk } from "../../src/repo/name-case";
import { caseFoldingFsForTests } from "../helpers/case-folding-fs";

const fs = caseFoldingFsForTests();

function files(root: string, paths: string[]): string {
  for (const p of paths) {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), p);
  }
  return root;
}

describe("a case-sensitive file system", () => {
  test("is not taken for one that folds case, whatever its root holds", () => {
    const base = mkdtempSync(join(tmpdir(), "ws-case-"));
    try {
      expect(foldsCase(files(join(base, "plain"), ["README.md", "src/a.ts"]))).toBe(false);
      // both spellings held: two files, not one
      expect(foldsCase(files(join(base, "both"), ["a", "A"]))).toBe(false);
      mkdirSync(join(base, "empty"));
      expect(foldsCase(join(base, "empty"))).toBe(false);
      mkdirSync(join(base, "123"));
      expect(foldsCase(join(base, "123"))).toBe(false);
      expect(spelledOnDisk(join(base, "plain"), "readme.md")).toBe("readme.md");
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!fs.canMount)("a file system that folds case", () => {
  test("is found out from any entry of the root, or from the root's own name", () => {
    expect(fs.mounted).toBe(true);
    expect(foldsCase(files(fs.dir("probe"), ["README.md"]))).toBe(true);
    expect(foldsCase(files(fs.dir("dot"), [".gitignore"]))).toBe(true);
    expect(foldsCase(fs.dir("empty"))).toBe(true);
  });

  test("a path is spelled as the directories hold it, down to the first name that is not there", () => {
    const root = files(fs.dir("spell"), ["Docs/README.md", "Docs/api/Index.html", "src/main.ts"]);
    expect(spelledOnDisk(root, "docs/readme.MD")).toBe("Docs/README.md");
    expect(spelledOnDisk(root, "DOCS/API/index.HTML")).toBe("Docs/api/Index.html");
    expect(spelledOnDisk(root, "DOCS/New/File.md")).toBe("Docs/New/File.md");
    expect(spelledOnDisk(root, "Src/main.ts/x")).toBe("src/main.ts/x");
    expect(spelledOnDisk(root, "src/main.ts")).toBe("src/main.ts");
    expect(spelledOnDisk(root, ".")).toBe(".");
  });
});

test("caseKey: one key for the spellings a case-folding file system takes for one name", () => {
  expect(caseKey("Docs/README.md")).toBe(caseKey("docs/readme.MD"));
  // composed and decomposed é (APFS and HFS+ find either)
  expect(caseKey("Caf\u00e9.txt")).toBe(caseKey("CAFE\u0301.TXT"));
  expect(caseKey("a.txt")).not.toBe(caseKey("b.txt"));
});
