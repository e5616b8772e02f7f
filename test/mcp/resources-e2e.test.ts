/**
 * Snapshots as MCP resources, through the compiled server and the SDK's own
 * client: listing, the URI template, reading files (text with a MIME type,
 * binary as a blob), directories as listings, and errors the client surfaces.
 */
import { describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { cli, mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 255, 1, 2]);

async function rpcError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error("expected a JSON-RPC error");
}

describe("snapshots as MCP resources", () => {
  test("resources/list shows recent snapshots newest first; the template addresses files; read returns text, blobs and listings", async () => {
    await using repo = await tmpRepo({ git: true });
    repo.write("src/main.ts", "export const x: number = 1;\n");
    repo.write("src/dir with space/é.md", "# héllo\n");
    repo.write("img/logo.png", PNG);
    repo.write("data.unknownext", "plain words\n");
    repo.write("bin.txt", new Uint8Array([104, 105, 0, 1]));
    repo.symlink("link", "src/main.ts");
    repo.commit();
    const older = cli(["snapshot", "create", "src", "--json", "--root", repo.root]).json().snapshot_id as string;
    await Bun.sleep(20);
    const newer = cli(["snapshot", "create", "--json", "--root", repo.root]).json().snapshot_id as string;
    const hex = newer.slice(7);

    await using s = await mcpSession(repo.root);
    expect(s.client.getServerCapabilities()?.resources).toBeDefined();
    const listed = await s.client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual([`worksnap://snapshot/${hex}/`, `worksnap://snapshot/${older.slice(7)}/`]);
    expect(listed.resources[0]!.description).toContain("6 files");

    const templates = await s.client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["worksnap://snapshot/{id}/{path}"]);

    const root = await s.client.readResource({ uri: `worksnap://snapshot/${hex}/` });
    const listing = root.contents[0] as { text: string; mimeType: string };
    expect(listing.mimeType).toBe("text/plain");
    expect(listing.text.split("\n").slice(1, -1)).toEqual(["bin.txt\t4 bytes", "data.unknownext\t12 bytes", "img/", "link\tsymlink", "src/"]);

    const ts = await s.client.readResource({ uri: `worksnap://snapshot/${hex}/src/main.ts` });
    expect(ts.contents).toEqual([{ uri: `worksnap://snapshot/${hex}/src/main.ts`, mimeType: "text/x-typescript", text: "export const x: number = 1;\n" }]);
    // A unique prefix of the id, and a path written as the template's simple expansion (%2F, percent-encoded UTF-8).
    const md = await s.client.readResource({ uri: `worksnap://snapshot/${hex.slice(0, 10)}/${encodeURIComponent("src/dir with space/é.md")}` });
    expect(md.contents[0]).toMatchObject({ mimeType: "text/markdown", text: "# héllo\n" });
    const png = await s.client.readResource({ uri: `worksnap://snapshot/${hex}/img/logo.png` });
    const blob = png.contents[0] as { blob: string; mimeType: string };
    expect(blob.mimeType).toBe("image/png");
    expect(new Uint8Array(Buffer.from(blob.blob, "base64"))).toEqual(PNG);
    expect((await s.client.readResource({ uri: `worksnap://snapshot/${hex}/bin.txt` })).contents[0]).toMatchObject({ mimeType: "application/octet-stream", blob: "aGkAAQ==" });
    expect((await s.client.readResource({ uri: `worksnap://snapshot/${hex}/data.unknownext` })).contents[0]).toMatchObject({ mimeType: "text/plain", text: "plain words\n" });
    expect((await s.client.readResource({ uri: `worksnap://snapshot/${hex}/link` })).contents[0]).toMatchObject({ text: "src/main.ts" });
    const sub = (await s.client.readResource({ uri: `worksnap://snapshot/${hex}/src` })).contents[0] as { text: string };
    expect(sub.text.split("\n").slice(1, -1)).toEqual(["src/dir with space/", "src/main.ts\t28 bytes"]);

    // The older snapshot captured src only.
    const olderMissing = await rpcError(s.client.readResource({ uri: `worksnap://snapshot/${older.slice(7)}/img/logo.png` }));
    expect(olderMissing.code).toBe(-32002);
  }, 60_000);

  test("unknown snapshots and paths are resource-not-found errors; malformed addresses are invalid-params errors", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("a.txt", "a\n");
    const id = cli(["snapshot", "create", "--json", "--root", repo.root]).json().snapshot_id as string;
    await using s = await mcpSession(repo.root);
    const cases: [string, number, string][] = [
      [`worksnap://snapshot/${"0".repeat(64)}/a.txt`, -32002, "NOT_FOUND"],
      [`worksnap://snapshot/${id.slice(7)}/missing.txt`, -32002, "NOT_FOUND"],
      [`worksnap://snapshot/${id.slice(7)}/../etc/passwd`, -32602, "INVALID_ARGUMENT"],
      [`worksnap://snapshot/xyz/a.txt`, -32602, "INVALID_ARGUMENT"],
      [`worksnap://snapshot/${id.slice(7)}/%E0%A4%A`, -32602, "INVALID_ARGUMENT"],
      ["file:///etc/passwd", -32602, "INVALID_ARGUMENT"],
    ];
    for (const [uri, code, name] of cases) {
      const e = await rpcError(s.client.readResource({ uri }));
      expect({ uri, code: e.code, data: (e.data as { code: string }).code }).toEqual({ uri, code, data: name });
    }
    expect(await s.client.listResources()).toMatchObject({ resources: [{ uri: `worksnap://snapshot/${id.slice(7)}/` }] });
  }, 60_000);
});
