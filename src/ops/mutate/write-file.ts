import { decodeBase64Argument } from "../../core/binary";
import { invalidArgument, tooLarge } from "../../core/errors";
import { blobIdOf, parseBlobRef, type BlobId } from "../../core/hash";
import { parseRepoPath } from "../../core/repo-path";
import { takeUtf8 } from "../../repo/decoded-bytes";
import { type MutationArgs, type MutationResult, runMutation } from "./mutation";
import type { Workspace } from "../workspace";

export interface WriteFileArgs extends MutationArgs {
  path: string;
  /** UTF-8 text, or `base64:` followed by standard base64 for any bytes. */
  content: string;
  /** Compare-and-swap: write only if the file's current blob is this one. */
  expected_blob?: string;
  /** Refuse to replace an existing file. */
  create_only?: boolean;
}

export type WriteFileResult = MutationResult<{
  path: string;
  resolved_path?: string;
  blob: BlobId;
  size: number;
  created: boolean;
}>;

/** Largest content write_file accepts, after decoding (a file that size is written in one piece). */
export const WRITE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * workspace_write_file: a whole file's content, bytes exactly as given. An
 * existing file keeps its mode; a new one gets 0644. A symlink inside the root
 * is written through to its target, and the answer names the target in
 * `resolved_path`.
 */
export async function writeFileOp(ws: Workspace, args: WriteFileArgs): Promise<WriteFileResult> {
  const path = parseRepoPath(args.path, "path");
  const expected = args.expected_blob === undefined ? undefined : parseBlobRef(args.expected_blob);
  if (expected === null) {
    throw invalidArgument(`expected_blob ${JSON.stringify(args.expected_blob)} is not a blob id (sha256:<64 hex>, or at least its first 12 hex digits)`, {
      arg: "expected_blob",
    });
  }
  if (args.create_only === true && args.expected_blob !== undefined) {
    throw invalidArgument("create_only and expected_blob contradict each other: create_only means the file must not exist", { arg: "create_only" });
  }
  const bytes = decodeWriteContent(args.content);
  const expect = args.create_only === true ? null : expected;
  const r = await runMutation(ws, args, "write_file", async () => ({
    changes: [{ kind: "write", path, bytes, follow: true, expect, operation: "replace" }],
    extra: {},
  }), { showDiff: true });
  const c = r.applied[0];
  // no change applied: the file already held these bytes (the answer's note says so)
  if (!c) return { ...r.result, path, blob: blobIdOf(bytes), size: bytes.length, created: false };
  const out: WriteFileResult = { ...r.result, path, blob: c.blob!, size: bytes.length, created: c.status === "created" };
  if (c.path !== path) out.resolved_path = c.path;
  return out;
}

/**
 * Content as bytes, refusing oversized input before decoding it: a base64
 * string's decoded size is known from its length, and a text's UTF-8 size is at
 * least its length, so a 1 GB argument is refused without a 1 GB allocation.
 */
export function decodeWriteContent(content: string): Uint8Array {
  if (typeof content !== "string") throw invalidArgument("content must be a string", { arg: "content" });
  if (content.startsWith("base64:")) return decodeBase64Argument(content.slice(7), "content", WRITE_MAX_BYTES, contentTooLarge);
  if (content.length > WRITE_MAX_BYTES) throw contentTooLarge(content.length);
  if (content.length * 3 > WRITE_MAX_BYTES) {
    const n = Buffer.byteLength(content, "utf8");
    if (n > WRITE_MAX_BYTES) throw contentTooLarge(n);
  }
  // a request's long content: the bytes it was decoded from, when the decoder still has them
  return takeUtf8(content) ?? new TextEncoder().encode(content);
}

function contentTooLarge(size: number) {
  return tooLarge(`content is about ${size} bytes; write_file takes at most ${WRITE_MAX_BYTES} bytes (256 MiB) per file`, {
    arg: "content",
    size,
    limit: WRITE_MAX_BYTES,
  });
}
