import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

const ORDER = ["core", "repo", "ops", "mcp", "cli"];

describe("layering (DESIGN 'Layers')", () => {
  for (const layer of ["core", "repo", "ops"]) {
    test(`src/${layer} never imports the MCP SDK, reads process.argv or writes stdout`, () => {
      for (const f of files(join(SRC, layer))) {
        const text = readFileSync(f, "utf8");
        const rel = relative(SRC, f);
        expect({ rel, sdk: /@modelcontextprotocol\/sdk/.test(text) }).toEqual({ rel, sdk: false });
        expect({ rel, argv: /process\.argv/.test(text) }).toEqual({ rel, argv: false });
        expect({ rel, stdout: /process\.stdout|console\.log/.test(text) }).toEqual({ rel, stdout: false });
      }
    });
  }

  test("dependencies point downward: core <- repo <- ops <- {mcp, cli}", () => {
    for (const f of files(SRC)) {
      const rel = relative(SRC, f);
      const layer = rel.split("/")[0] as string;
      const rank = ORDER.indexOf(layer);
      if (rank < 0) continue;
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(SRC, join(f, "..", m[1] as string)).split("/")[0] as string;
        const targetRank = ORDER.indexOf(target);
        if (targetRank < 0) continue;
        const ok = targetRank <= rank && !(layer === "mcp" && target === "cli") && !(layer === "cli" && target === "mcp" && !rel.endsWith("serve.ts"));
        expect({ rel, imports: m[1], ok }).toEqual({ rel, imports: m[1], ok: true });
      }
    }
  });
});
