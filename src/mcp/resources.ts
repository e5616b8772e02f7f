/**
 * Snapshots as MCP resources, for hosts that attach resources to a
 * conversation (Claude Desktop, VS Code): `resources/list` shows the recent
 * snapshots, the template `worksnap://snapshot/{id}/{path}` addresses any
 * file or directory in one, and `resources/read` returns a file's content
 * (text with a MIME type by extension, or a base64 blob) or a directory's
 * listing. Snapshots are immutable, so a resource's content never changes.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { RequestContext } from "./roots";
import { encodeContent } from "../core/binary";
import { WorksnapError, invalidArgument } from "../core/errors";
import { publicError } from "../core/public-error";
import { hexOfBlobId } from "../core/hash";
import { readSnapshotNode, type SnapshotNode } from "../ops/snapshot/path-node";
import { listSnapshots } from "../ops/snapshot/info";
import type { Workspace } from "../ops/workspace";

const SCHEME = "worksnap://snapshot/";
export const SNAPSHOT_TEMPLATE = `${SCHEME}{id}/{path}`;
/** Snapshots resources/list shows, newest first. */
export const LISTED_SNAPSHOTS = 50;
/** The JSON-RPC code MCP gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

export function snapshotUri(snapshotId: string, path = "."): string {
  const rel = path === "." ? "" : path.split("/").map(encodeURIComponent).join("/");
  return `${SCHEME}${hexOfBlobId(snapshotId)}/${rel}`;
}

/** Runs a read for a client within the server's limit of work in flight (server.ts). */
export type Bounded = <T>(name: string, signal: AbortSignal, run: () => Promise<T>) => Promise<T>;

/** The workspace a request works on (the session's root, learned from the client when it has roots). */
export type WorkspaceFor = (extra: RequestContext) => Promise<Workspace>;

export function registerResources(server: Server, workspaceFor: WorkspaceFor, bounded: Bounded): void {
  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => {
    const ws = await listedWorkspace(workspaceFor, extra);
    const snapshots = ws === null ? [] : listSnapshots(ws, LISTED_SNAPSHOTS).snapshots;
    return {
      resources: snapshots.map((s) => ({
        uri: snapshotUri(s.snapshot_id),
        name: `snapshot ${hexOfBlobId(s.snapshot_id).slice(0, 12)}`,
        title: `Snapshot ${hexOfBlobId(s.snapshot_id).slice(0, 12)} (${s.created_at})`,
        description: `${s.files} files, ${s.bytes} bytes, taken ${s.created_at}${s.paths.length > 0 ? ` of ${s.paths.slice(0, 5).join(", ")}${s.paths.length > 5 ? ", ..." : ""}` : ""}`,
        mimeType: "text/plain",
      })),
    };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: SNAPSHOT_TEMPLATE,
        name: "snapshot file",
        title: "File or directory in a snapshot",
        description: "id: a snapshot id (64 hex digits, or a unique prefix of at least 8); path: repo-relative, '/' separated (written as is or as %2F). A file returns its content, a directory its listing.",
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    let ws: Workspace | null = null;
    try {
      const inWs = (ws = await workspaceFor(extra));
      const { id, path } = parseSnapshotUri(uri);
      const node = await bounded("resources/read", extra.signal, () => readSnapshotNode(inWs, id, path));
      return { contents: [resourceContent(uri, node)] };
    } catch (err) {
      if (extra.signal.aborted) throw err;
      // as a tool's error answer shows it: repo-relative paths, no stack, no other absolute path
      const e = publicError(err, { root: ws?.repo.root ?? null, foreignPaths: "redact" });
      const code = e.code === "NOT_FOUND" ? RESOURCE_NOT_FOUND : e.code === "INTERNAL" ? ErrorCode.InternalError : ErrorCode.InvalidParams;
      throw new McpError(code, `${e.code}: ${e.message}`, { code: e.code, details: e.code === "INTERNAL" ? {} : e.details });
    }
  });
}

/**
 * The workspace whose snapshots resources/list shows, or null when the session has no repository (a server
 * started in `/` without --root: roots.ts): hosts ask for the list on their own when they connect, and there is
 * nothing to list then, not a failure to report; the tools say what to do.
 */
async function listedWorkspace(workspaceFor: WorkspaceFor, extra: RequestContext): Promise<Workspace | null> {
  try {
    return await workspaceFor(extra);
  } catch (err) {
    if (err instanceof WorksnapError && err.details.reason === "no_root") return null;
    throw err;
  }
}

/** `worksnap://snapshot/<id>/<path>`; the path may be empty (the root) and may carry %2F for "/". */
export function parseSnapshotUri(uri: string): { id: string; path: string } {
  if (!uri.startsWith(SCHEME)) throw invalidArgument(`${uri} is not a worksnap resource: expected ${SNAPSHOT_TEMPLATE}`, { uri });
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf("/");
  const id = slash < 0 ? rest : rest.slice(0, slash);
  let path: string;
  try {
    path = decodeURIComponent(slash < 0 ? "" : rest.slice(slash + 1));
  } catch {
    throw invalidArgument(`${uri} has a malformed percent-encoding`, { uri });
  }
  if (id === "") throw invalidArgument(`${uri} names no snapshot: expected ${SNAPSHOT_TEMPLATE}`, { uri });
  return { id, path };
}

function resourceContent(uri: string, node: SnapshotNode): { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string } {
  if (node.kind === "dir") return { uri, mimeType: "text/plain", text: listingText(node) };
  if (node.mode === "120000") return { uri, mimeType: "text/plain", text: new TextDecoder().decode(node.bytes) };
  const enc = encodeContent(node.bytes);
  const type = mimeType(node.path);
  if (enc.encoding === "utf8") return { uri, mimeType: type.text ? type.mime : "text/plain", text: enc.content };
  return { uri, mimeType: type.text ? "application/octet-stream" : type.mime, blob: enc.content.slice("base64:".length) };
}

function listingText(node: Extract<SnapshotNode, { kind: "dir" }>): string {
  const where = node.path === "." ? "/" : `${node.path}/`;
  const head = `snapshot ${node.snapshot.snapshot_id} (${node.snapshot.created_at}) ${where}: ${node.total} entr${node.total === 1 ? "y" : "ies"}`;
  const lines = node.entries.map((e) => (e.type === "dir" ? `${e.path}/` : `${e.path}\t${e.type === "symlink" ? "symlink" : `${e.size} bytes`}`));
  if (node.truncated) lines.push(`... ${node.total - node.entries.length} more`);
  return `${[head, ...lines].join("\n")}\n`;
}

/** MIME types by extension; `text` says whether the type describes text (used only when the bytes are text). */
const TYPES: Record<string, { mime: string; text: boolean }> = {};
const add = (mime: string, text: boolean, exts: string) => {
  for (const ext of exts.split(" ")) TYPES[ext] = { mime, text };
};
add("text/markdown", true, "md markdown");
add("application/json", true, "json");
add("text/javascript", true, "js mjs cjs jsx");
add("text/x-typescript", true, "ts mts cts tsx");
add("text/x-python", true, "py");
add("text/x-rust", true, "rs");
add("text/x-go", true, "go");
add("text/x-c", true, "c h");
add("text/x-c++", true, "cc cpp cxx hh hpp hxx");
add("text/x-java", true, "java");
add("text/x-ruby", true, "rb");
add("text/x-shellscript", true, "sh bash zsh");
add("text/html", true, "html htm");
add("text/css", true, "css");
add("application/xml", true, "xml");
add("application/yaml", true, "yaml yml");
add("application/toml", true, "toml");
add("text/csv", true, "csv");
add("application/sql", true, "sql");
add("image/svg+xml", true, "svg");
add("text/plain", true, "txt log");
add("image/png", false, "png");
add("image/jpeg", false, "jpg jpeg");
add("image/gif", false, "gif");
add("image/webp", false, "webp");
add("image/vnd.microsoft.icon", false, "ico");
add("application/pdf", false, "pdf");
add("application/zip", false, "zip");
add("application/gzip", false, "gz tgz");
add("application/wasm", false, "wasm");
add("font/woff2", false, "woff2");

export function mimeType(path: string): { mime: string; text: boolean } {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
  return TYPES[ext] ?? { mime: "application/octet-stream", text: false };
}
