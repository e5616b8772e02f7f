import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES } from "../../src/core/errors";
import { servedSchemas } from "../../src/mcp/registry";
import { schemaFileText } from "../../src/mcp/schema-gen";
import { TOOLS } from "../../src/mcp/tool-list";
import { tmpRepo } from "../helpers/tmp-repo";
import { cli, mcpSession } from "../helpers/binary";
import { visibleToolTokens } from "../../bench/token-count";

const SCHEMA_DIR = join(import.meta.dir, "..", "..", "schemas");

/** Keywords that mean the same in draft-07 and 2020-12 (DESIGN decision 11). */
const PORTABLE = new Set([
  "type", "properties", "required", "items", "enum", "const", "description", "default", "minimum", "maximum",
  "minLength", "maxLength", "pattern", "oneOf", "additionalProperties", "minItems", "maxItems", "title",
]);

function walk(schema: unknown, visit: (s: Record<string, unknown>, path: string) => void, path = "$"): void {
  if (!schema || typeof schema !== "object") return;
  const s = schema as Record<string, unknown>;
  visit(s, path);
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties") for (const [p, sub] of Object.entries(v as object)) walk(sub, visit, `${path}.properties.${p}`);
    else if (k === "items") walk(v, visit, `${path}.items`);
    else if (k === "oneOf") (v as unknown[]).forEach((b, i) => walk(b, visit, `${path}.oneOf[${i}]`));
  }
}

describe("tool schemas", () => {
  test("schemas/ holds exactly the files generated from the tool definitions (no drift)", () => {
    const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith(".json")).sort();
    expect(files).toEqual(TOOLS.map((t) => `${t.name}.json`).sort());
    for (const def of TOOLS) expect(readFileSync(join(SCHEMA_DIR, `${def.name}.json`), "utf8")).toBe(schemaFileText(def));
  });

  for (const def of TOOLS) {
    test(`${def.name}: input and output schemas follow the client rules and spec section 5`, () => {
      const { inputSchema, outputSchema } = servedSchemas(def.name);
      expect(def.name).toMatch(/^[a-zA-Z0-9_-]+$/);
      expect(def.description.length).toBeGreaterThan(100);
      expect(def.description.length).toBeLessThan(2000);
      // input: root object with properties, no combinators, no $ref/$defs/$schema, arrays with items
      expect(inputSchema.type).toBe("object");
      expect(inputSchema.properties).toBeDefined();
      for (const k of ["oneOf", "anyOf", "allOf", "$ref", "$defs", "$schema"]) expect(inputSchema).not.toHaveProperty(k);
      for (const schema of [inputSchema, outputSchema ?? {}]) {
        walk(schema, (s, path) => {
          for (const k of Object.keys(s)) if (!PORTABLE.has(k)) throw new Error(`${def.name} ${path}: keyword ${k} is not portable`);
          if (s.type === "array") expect(s.items).toBeDefined();
        });
      }
      // A text-only tool (the task tools: their wire line is the answer) declares no output schema at all.
      expect(outputSchema === undefined).toBe(def.output === null);
      if (outputSchema === undefined) return;
      // output: root object; oneOf of success branch(es) plus the error branch with STALE_LEASE in its enum
      expect(outputSchema.type).toBe("object");
      const branches = outputSchema.oneOf as Record<string, any>[];
      const error = branches.find((b) => b.required?.includes("error"));
      expect(error?.properties.error.properties.code.enum).toEqual([...ERROR_CODES]);
      expect(error?.properties.error.properties.code.enum).toContain("STALE_LEASE");
      const hints = branches.filter((b) => b !== error).map((b) => b.properties?.cache_hint?.const);
      const modeEnum = (inputSchema.properties as any).mode?.enum as string[] | undefined;
      if (modeEnum?.includes("worktree") && modeEnum.includes("snapshot")) {
        expect(hints.sort()).toEqual(["immutable", "until_dirty"]);
        const wt = branches.find((b) => b.properties?.cache_hint?.const === "until_dirty")!;
        expect(wt.required).toEqual(expect.arrayContaining(["cache_hint", "lease_id", "fingerprint"]));
        expect(wt.properties.lease_id.type).toBe("string");
        expect(wt.properties.fingerprint.type).toBe("object");
      }
      for (const b of branches.filter((x) => x !== error)) {
        if (b.properties?.cache_hint) expect(b.required).toContain("cache_hint");
      }
    });
  }

  test("tools/list from the running binary serves exactly the schemas/ files, with annotations", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    for (const t of tools) {
      const file = JSON.parse(readFileSync(join(SCHEMA_DIR, `${t.name}.json`), "utf8"));
      expect(t.inputSchema).toEqual(file.inputSchema);
      expect(t.outputSchema).toEqual(file.outputSchema);
      expect(typeof t.annotations?.readOnlyHint).toBe("boolean");
    }
  });

  test("--tool-names dotted serves the spec's dotted names", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root, ["--tool-names", "dotted"]);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("snapshot.create");
    const r = await s.call("snapshot.create", { paths: ["."] });
    expect(r.snapshot_id).toMatch(/^sha256:/);
  });
});

describe("the tool list a model pays for", () => {
  test("the 12 substrate tools' names, descriptions and input schemas stay within 3,000 o200k tokens", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root);
    const { tools } = await s.client.listTools();
    const substrate = tools.filter((t) => SUBSTRATE.includes(t.name));
    expect(substrate.map((t) => t.name).sort()).toEqual([...SUBSTRATE].sort());
    const total = substrate.reduce((n, t) => n + visibleToolTokens(t), 0);
    expect(total).toBeLessThanOrEqual(3000);
  });
});

const SUBSTRATE = [
  "snapshot_create", "snapshot_list", "snapshot_file", "snapshot_info", "snapshot_grep", "snapshot_changes",
  "snapshot_diff", "snapshot_export", "workspace_apply_patch", "workspace_write_file", "workspace_delete", "workspace_move",
];

describe("serve --tools: the groups a host offers its model", () => {
  test("only the groups named are listed and callable; a tool of another group is unknown", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    await using s = await mcpSession(repo.root, ["--tools", "snapshot,workspace"]);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names.sort()).toEqual([...SUBSTRATE].sort());
    expect((await s.call("snapshot_create", { paths: ["."] })).snapshot_id).toMatch(/^sha256:/);
    const hidden = await s.client.callTool({ name: "snap", arguments: { mode: "start" } }).then(
      () => "answered",
      (err: Error) => err.message,
    );
    expect(hidden).toContain("Unknown tool: snap");
  });

  test("the task group alone lists the seven tools of spec 003; an unknown group is a usage error naming the groups", async () => {
    await using repo = await tmpRepo();
    await using s = await mcpSession(repo.root, ["--tools", "task"]);
    expect((await s.client.listTools()).tools.map((t) => t.name).sort()).toEqual(["check", "snap", "snap_end", "snap_fix", "snap_help", "snap_learn", "snap_violation"]);
    const r = cli(["serve", "--root", repo.root, "--tools", "snapshot,grep"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--tools takes groups among snapshot, workspace, history, task, not "grep"');
  });
});
