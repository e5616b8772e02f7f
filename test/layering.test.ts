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

/** What each layer may import: itself and the layers below; the adapters (mcp, web, cli) never each other. */
const ALLOWED: Record<string, string[]> = {
  core: ["core"],
  repo: ["core", "repo"],
  ops: ["core", "repo", "ops"],
  mcp: ["core", "repo", "ops", "mcp"],
  web: ["core", "repo", "ops", "web"],
  cli: ["core", "repo", "ops", "cli"],
};
/** The CLI commands that start another adapter: `serve` (mcp) and `history review` (web). */
const STARTS_ADAPTER: Record<string, string> = { "cli/commands/serve.ts": "mcp", "cli/commands/history-review.ts": "web" };

describe("layering (DESIGN 'Layers')", () => {
  for (const layer of ["core", "repo", "ops", "web"]) {
    test(`src/${layer} never imports the MCP SDK, reads process.argv or writes stdout`, () => {
      for (const f of files(join(SRC, layer))) {
        const text = readFileSync(f, "utf8");
        const rel = relative(SRC, f);
        expect({ rel, sdk: /@modelcontextprotocol\/sdk/.test(text) }).toEqual({ rel, sdk: false });
        expect({ rel, argv: /process\.argv/.test(text) }).toEqual({ rel, argv: false });
        expect({ rel, stdout: /process\.stdout|console\.log/.test(text) }).toEqual({ rel, stdout: false });
        expect({ rel, web: /from\s+"[^"]*\/web\//.test(text) && layer !== "web" }).toEqual({ rel, web: false });
      }
    });
  }

  test("dependencies point downward: core <- repo <- ops <- {mcp, web, cli}; adapters never import each other", () => {
    for (const f of files(SRC)) {
      const rel = relative(SRC, f);
      const layer = rel.split("/")[0] as string;
      const allowed = ALLOWED[layer];
      if (!allowed) continue;
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/(?:from\s+|import\()"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(SRC, join(f, "..", m[1] as string)).split("/")[0] as string;
        if (!(target in ALLOWED)) continue;
        const ok = allowed.includes(target) || STARTS_ADAPTER[rel] === target;
        expect({ rel, imports: m[1], ok }).toEqual({ rel, imports: m[1], ok: true });
      }
    }
  });

  test("rooms of src/ops depend on each other one way (docs/architecture.md)", () => {
    const OPS = join(SRC, "ops");
    const rooms = readdirSync(OPS).filter((n) => statSync(join(OPS, n)).isDirectory());
    expect(rooms.filter((r) => !(r in ROOM_ARROWS)).sort()).toEqual([]);
    for (const room of rooms) {
      for (const f of files(join(OPS, room))) {
        const text = readFileSync(f, "utf8");
        for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
          const target = relative(OPS, join(f, "..", m[1] as string));
          if (target.startsWith("..")) continue; // outside ops: the layer rule above
          const targetRoom = target.includes("/") ? (target.split("/")[0] as string) : null;
          if (targetRoom === null || targetRoom === room) continue; // the composition root, or the room itself
          const rel = relative(SRC, f);
          expect({ rel, imports: m[1], allowed: ROOM_ARROWS[room]!.includes(targetRoom) }).toEqual({ rel, imports: m[1], allowed: true });
        }
      }
    }
    // the arrows themselves never loop back
    const visiting = new Set<string>();
    const walk = (room: string, path: string[]): void => {
      expect({ cycle: path, back: visiting.has(room) }).toEqual({ cycle: path, back: false });
      visiting.add(room);
      for (const next of ROOM_ARROWS[room] ?? []) walk(next, [...path, next]);
      visiting.delete(room);
    };
    for (const room of Object.keys(ROOM_ARROWS)) walk(room, [room]);
  });
});

/** Which rooms of src/ops each room may import; the root's workspace.ts (the composition root) is open to all. */
const ROOM_ARROWS: Record<string, string[]> = {
  snapshot: ["live", "grep", "diff"],
  mutate: ["write", "live", "patch", "history", "snapshot"],
  task: ["snapshot", "write", "live", "history", "diff", "patch"],
  history: ["write", "patch", "diff"],
  write: ["live"],
  diff: ["patch"],
  live: [],
  grep: [],
  patch: [],
  gc: ["history", "task"],
};
