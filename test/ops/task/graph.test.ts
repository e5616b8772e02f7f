import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../../src/ops/task/check";
import { changedSymbols } from "../../../src/ops/task/docs-check";
import { buildImportGraph } from "../../../src/ops/task/import-graph";
import { startTask } from "../../../src/ops/task/start";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

function seed(repo: TmpRepo, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) repo.write(p, text);
}

const edges = (g: Awaited<ReturnType<typeof buildImportGraph>>, from: string) => [...(g.edges.get(from) ?? new Map()).entries()].sort();

describe("import graph", () => {
  test("TypeScript/JavaScript: relative, index, .js naming .ts, tsconfig paths and baseUrl, type-only, require and dynamic import; packages left out", async () => {
    await using repo = await tmpRepo();
    seed(repo, {
      "tsconfig.json": '{ // comments allowed\n "compilerOptions": { "baseUrl": ".", "paths": { "@lib/*": ["src/lib/*"], "~cfg": ["config/index.ts"] } } }',
      "src/app.ts": [
        'import { a } from "./util";',
        'import { b } from "./dir";',
        'import { c } from "./esm.js";',
        'import { d } from "@lib/math";',
        'import cfg from "~cfg";',
        'import type { T } from "./types";',
        'export type { U } from "./more-types";',
        'import react from "react";',
        'const e = require("./cjs");',
        'const f = await import("./lazy");',
        'import { g } from "src/lib/math";',
      ].join("\n"),
      "src/util.ts": "export const a = 1;",
      "src/dir/index.ts": "export const b = 1;",
      "src/esm.ts": "export const c = 1;",
      "src/lib/math.ts": "export const d = 1;",
      "config/index.ts": "export default 1;",
      "src/types.ts": "export type T = number;",
      "src/more-types.d.ts": "export type U = string;",
      "src/cjs.js": "module.exports = 1;",
      "src/lazy.tsx": "export const f = <div/>;",
    });
    repo.commit();
    using ws = wsOf(repo);
    const g = await buildImportGraph(ws);
    expect(edges(g, "src/app.ts")).toEqual([
      ["config/index.ts", false],
      ["src/cjs.js", false],
      ["src/dir/index.ts", false],
      ["src/esm.ts", false],
      ["src/lazy.tsx", false],
      ["src/lib/math.ts", false],
      ["src/more-types.d.ts", true],
      ["src/types.ts", true],
      ["src/util.ts", false],
    ]);
  });

  test("Python, Go and C/C++", async () => {
    await using repo = await tmpRepo();
    seed(repo, {
      "app/__init__.py": "",
      "app/main.py": "import app.models\nfrom app import views\nfrom .helpers import fmt\nfrom . import sibling\nimport os, json\nfrom pkg.sub import (\n    thing,\n    other as o,\n)\n",
      "app/models.py": "",
      "app/views.py": "",
      "app/helpers.py": "",
      "app/sibling.py": "",
      "src/pkg/__init__.py": "",
      "src/pkg/sub.py": "",
      "go.mod": "module example.com/shop\n\ngo 1.22\n",
      "cmd/main.go": 'package main\n\nimport (\n\t"fmt"\n\tcart "example.com/shop/cart"\n)\n// import "example.com/shop/ignored"\nfunc main() { fmt.Println(cart.Total()) }\n',
      "cart/cart.go": "package cart\nfunc Total() int { return 1 }\n",
      "cart/tax.go": "package cart\n",
      "cart/cart_test.go": "package cart\n",
      "native/app.c": '#include <stdio.h>\n#include "util.h"\n#include "include/api.h"\n',
      "native/util.h": '#include "types.h"\n',
      "include/types.h": "",
      "include/api.h": "",
    });
    repo.commit();
    using ws = wsOf(repo);
    const g = await buildImportGraph(ws);
    // `from app import views` runs app/__init__.py too: it is a dependency like the submodule.
    expect(edges(g, "app/main.py").map(([p]) => p)).toEqual(["app/__init__.py", "app/helpers.py", "app/models.py", "app/sibling.py", "app/views.py", "src/pkg/sub.py"]);
    expect(edges(g, "cmd/main.go").map(([p]) => p)).toEqual(["cart/cart.go", "cart/tax.go"]);
    expect(edges(g, "cart/cart_test.go").map(([p]) => p)).toEqual(["cart/cart.go", "cart/tax.go"]);
    expect(edges(g, "native/app.c").map(([p]) => p)).toEqual(["include/api.h", "native/util.h"]);
    expect(edges(g, "native/util.h").map(([p]) => p)).toEqual(["include/types.h"]);
  });
});

describe("check impact, circular and docs", () => {
  test("impact lists the transitive dependents of the changed files and the tests among them", async () => {
    await using repo = await tmpRepo();
    seed(repo, {
      "src/core.ts": "export const k = 1;\n",
      "src/mid.ts": 'import { k } from "./core";\nexport const m = k;\n',
      "src/top.ts": 'import { m } from "./mid";\nexport const t = m;\n',
      "src/other.ts": "export const o = 1;\n",
      "test/top.test.ts": 'import { t } from "../src/top";\n',
      "test/other.test.ts": 'import { o } from "../src/other";\n',
    });
    repo.commit();
    using ws = wsOf(repo);
    await startTask(ws, { task: "change core" });
    repo.write("src/core.ts", "export const k = 2;\n");
    const r = await runCheck(ws, { mode: "impact" });
    expect(r.impact).toEqual({
      dependents: [{ path: "src/mid.ts", depth: 1 }, { path: "src/top.ts", depth: 2 }, { path: "test/top.test.ts", depth: 3 }],
      total: 3,
      tests: ["test/top.test.ts"],
    });
    expect(r.status).toBe("pass");
    // A deleted file's importers depend on it still (their import is now broken).
    rmSync(join(repo.root, "src/core.ts"));
    expect((await runCheck(ws, { mode: "impact" })).impact?.dependents.map((d) => d.path)).toEqual(["src/mid.ts", "src/top.ts", "test/top.test.ts"]);
  });

  test("circular: a cycle the task made is an error, one that existed is a warning, a type-only loop is none", async () => {
    await using repo = await tmpRepo();
    seed(repo, {
      "src/a.ts": 'import { b } from "./b";\nexport const a = 1;\n',
      "src/b.ts": "export const b = 1;\n",
      "src/x.ts": 'import { y } from "./y";\nexport const x = 1;\n',
      "src/y.ts": 'import { x } from "./x";\nexport const y = 1;\n',
      "src/t1.ts": 'import type { T2 } from "./t2";\nexport type T1 = number;\n',
      "src/t2.ts": "export type T2 = number;\n",
    });
    repo.commit();
    using ws = wsOf(repo);
    await startTask(ws, { task: "wire things" });
    repo.write("src/b.ts", 'import { a } from "./a";\nexport const b = a;\n');
    repo.write("src/y.ts", 'import { x } from "./x";\nexport const y = 2;\n');
    repo.write("src/t2.ts", 'import type { T1 } from "./t1";\nexport type T2 = T1;\n');
    const r = await runCheck(ws, { mode: "circular" });
    expect(r.cycles).toEqual([
      { path: ["src/b.ts", "src/a.ts"], preexisting: false },
      { path: ["src/y.ts", "src/x.ts"], preexisting: true },
    ]);
    expect(r.errors).toBe(1);
    expect(r.warnings).toBe(1);
    expect(r.status).toBe("fail");
  });

  test("docs: documentation naming a changed file or changed export, not updated, is reported; updated documentation is not", async () => {
    await using repo = await tmpRepo();
    seed(repo, {
      "src/auth.ts": "export function validateToken(t: string) {\n  return t.length > 0;\n}\n\nexport function untouchedHelper() {\n  return 1;\n}\n",
      "docs/api.md": "# API\n\nCall `validateToken` before anything else.\n",
      "docs/helpers.md": "Use untouchedHelper for one.\n",
      "docs/files.md": "The login code lives in src/auth.ts.\n",
      "README.md": "Nothing relevant.\n",
    });
    repo.commit();
    using ws = wsOf(repo);
    await startTask(ws, { task: "tighten tokens" });
    repo.write("src/auth.ts", "export function validateToken(t: string) {\n  return t.length > 8;\n}\n\nexport function untouchedHelper() {\n  return 1;\n}\n");
    const r = await runCheck(ws, { mode: "docs" });
    expect(r.docs).toEqual([
      { doc: "docs/api.md", line: 3, mentions: "validateToken", changed: "src/auth.ts" },
      { doc: "docs/files.md", line: 1, mentions: "src/auth.ts", changed: "src/auth.ts" },
    ]);
    expect(r.warnings).toBe(2);
    repo.write("docs/api.md", "# API\n\nCall `validateToken` first; tokens need 9 characters.\n");
    expect((await runCheck(ws, { mode: "docs" })).docs?.map((d) => d.doc)).toEqual(["docs/files.md"]);
  });

  test("changed exports: added, removed, and those whose declaration changed", () => {
    const before = "export function a() {\n  return 1;\n}\nexport const b = 2;\nexport class Gone {}\nexport { c as cee };\n";
    const after = "export function a() {\n  return 1;\n}\nexport const b = 3;\nexport interface Added {}\nexport { c as cee };\n";
    expect(changedSymbols("x.ts", before, after)).toEqual(["Added", "Gone"]);
    expect(changedSymbols("m.py", "def keep():\n    pass\n\ndef edit():\n    return 1\n", "def keep():\n    pass\n\ndef edit():\n    return 2\n\ndef _private():\n    pass\n")).toEqual(["edit"]);
  });
});
