import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { STATE_FORMAT } from "../../src/repo/state-format";
import { BINARY, cli, mcpSession } from "../helpers/binary";
import { tmpDir } from "../helpers/tmp-repo";
import expected from "../fixtures/state-format-1/expected.json" with { type: "json" };

const FIXTURE = join(import.meta.dir, "..", "fixtures", "state-format-1", "state-format-1.tar.gz");

/** The fixture repository (its .mcp/ written by worksnap 0.1.0) unpacked into a fresh temp dir. */
function unpack(dir: string): string {
  const r = Bun.spawnSync(["tar", "-xzf", FIXTURE, "-C", dir]);
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return join(dir, "repo");
}

/** Every file under dir with its bytes' hash, size and mtime: what "left untouched" means. */
function treeDigest(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        out.push(`${relative(dir, p)}/`);
        walk(p);
      } else out.push(`${relative(dir, p)} ${st.size} ${st.mtimeMs} ${new Bun.CryptoHasher("sha256").update(readFileSync(p)).digest("hex")}`);
    }
  };
  walk(dir);
  return out;
}

describe("upgrades keep data: a .mcp/ written by worksnap 0.1.0", () => {
  test("is read by this binary: snapshots, their files, the export, the edit history", async () => {
    await using dir = tmpDir("ws-upgrade-");
    const root = unpack(dir.path);
    const { first, second } = expected.snapshots;
    const log = cli(["snapshot", "log", "--root", root]);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain(first.slice(7, 19));
    expect(log.stdout).toContain(second.slice(7, 19));
    for (const [side, id] of [["first", first], ["second", second]] as const) {
      for (const [path, text] of Object.entries(expected.files[side])) {
        expect(cli(["snapshot", "file", path, "--snapshot", id, "--root", root]).stdout).toBe(text as string);
      }
    }
    const changes = cli(["snapshot", "changes", first, second, "--root", root]).stdout;
    expect(changes).toBe("modified     README.md\nadded        notes.txt\nmodified     src/util.ts\n");
    // the bundle is deterministic: exported again from the old store, it is byte-identical to 0.1.0's
    const bundle = cli(["snapshot", "export", first, "--json", "-o", join(dir.path, "again.tar"), "--root", root]).json();
    expect(bundle.sha256).toBe(expected.bundle.sha256);

    const status = cli(["history", "status", "--json", "--root", root]).json();
    expect(status.entries.map((e: any) => ({ edit_id: e.edit_id, file_path: e.file_path, status: e.status, conversation_id: e.conversation_id, operation: e.operation }))).toEqual(expected.edits);
    const readme = expected.edits.find((e) => e.file_path === "README.md")!;
    expect(cli(["history", "show", readme.edit_id.slice(0, 8), "--root", root]).stdout).toContain("+It has an edit history.");
    // an old edit is still reviewable: rejecting it rebuilds the file from 0.1.0's checkpoint
    const reject = cli(["history", "reject", readme.edit_id.slice(0, 8), "--root", root]);
    expect(reject.code).toBe(0);
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe(expected.files.first["README.md"]);
    expect(readFileSync(join(root, ".mcp", "format"), "utf8")).toBe(`${STATE_FORMAT}\n`);

    await using s = await mcpSession(root);
    const f = await s.call("snapshot_file", { mode: "snapshot", snapshot_id: second, path: "src/util.ts" });
    expect(f.content).toBe(expected.files.second["src/util.ts"]);
  });

  test("worksnap migrate writes the format number and changes nothing else; --check only reports", async () => {
    await using dir = tmpDir("ws-upgrade-");
    const root = unpack(dir.path);
    const before = treeDigest(join(root, ".mcp"));
    const check = cli(["migrate", "--check", "--root", root]);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("would write .mcp/format");
    expect(treeDigest(join(root, ".mcp"))).toEqual(before);
    const run = cli(["migrate", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ exists: true, from: 1, to: STATE_FORMAT, was_marked: false, current: true });
    const after = treeDigest(join(root, ".mcp"));
    expect(after.filter((l) => !l.startsWith("format "))).toEqual(before);
    expect(readFileSync(join(root, ".mcp", "format"), "utf8")).toBe(`${STATE_FORMAT}\n`);
    expect(cli(["migrate", "--root", root]).stdout).toBe(`.mcp/ is at state format ${STATE_FORMAT}: nothing to do\n`);
  });
});

describe("a .mcp/ of worksnap 0.1.0 that this user cannot write", () => {
  test("is read as it is: the format number is written when it can be, not required", async () => {
    await using dir = tmpDir("ws-readonly-");
    const root = unpack(dir.path);
    const asRoot = process.getuid?.() === 0;
    // root writes anywhere: read as an unprivileged user then, the tree its own (git refuses another user's
    // repository) but .mcp root's and only readable to it; else drop write bits
    if (asRoot) Bun.spawnSync(["chown", "-R", "65534:65534", root]);
    if (asRoot) Bun.spawnSync(["chown", "-R", "0:0", join(root, ".mcp")]);
    Bun.spawnSync(["chmod", "-R", asRoot ? "a+rX" : "a-w", join(root, ".mcp")]);
    Bun.spawnSync(["chmod", "a+rx", dir.path, root]);
    const args = [BINARY, "snapshot", "file", "src/util.ts", "--snapshot", expected.snapshots.second, "--root", root];
    const r = Bun.spawnSync(asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...args] : args, { env: { ...process.env, HOME: "/tmp" } });
    Bun.spawnSync(["chmod", "-R", "u+w", join(root, ".mcp")]);
    expect(r.stderr.toString()).toBe("");
    expect(r.stdout.toString()).toBe(expected.files.second["src/util.ts"]);
    expect(existsSync(join(root, ".mcp", "format"))).toBe(false);
  });
});

describe("a .mcp/ of a newer format than this binary knows", () => {
  test("is refused by every command and by serve, with a clear message, and left byte for byte as it was", async () => {
    await using dir = tmpDir("ws-newer-");
    const root = unpack(dir.path);
    writeFileSync(join(root, ".mcp", "format"), `${STATE_FORMAT + 1}\n`);
    const before = treeDigest(root);
    const commands = [
      ["snapshot", "log"],
      ["snapshot", "create"],
      ["snapshot", "file", "README.md", "--snapshot", expected.snapshots.first],
      ["history", "status"],
      ["history", "reject", expected.edits[0]!.edit_id.slice(0, 8)],
      ["migrate"],
    ];
    for (const args of commands) {
      const r = cli([...args, "--root", root]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr).toContain(`state format ${STATE_FORMAT + 1}, written by a newer worksnap`);
      const json = cli([...args, "--root", root, "--json"]).json();
      expect(json.error).toMatchObject({ code: "INVALID_ARGUMENT", details: { state_format: STATE_FORMAT + 1, supported_format: STATE_FORMAT } });
    }
    const transport = new StdioClientTransport({ command: BINARY, args: ["serve", "--root", root], stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (d) => (stderr += d.toString()));
    const client = new Client({ name: "worksnap-test", version: "0.0.0" });
    await expect(client.connect(transport)).rejects.toThrow();
    await client.close();
    expect(stderr).toContain("written by a newer worksnap");
    expect(treeDigest(root)).toEqual(before);
  });
});
