/**
 * Grep cursors: opaque base64url of canonical JSON
 * `{"m":<matches to skip in p>,"p":<path>,"q":<query identity>,"v":1}`
 * (an empty path resumes before every file).
 *
 * The position is a path plus the number of that file's matches already
 * returned, so resuming re-reads that one file and skips what was sent. The
 * identity hashes everything that decides which matches exist (pattern, flags
 * and the caller's queryKey, which names the tree and the path filters), so a
 * cursor used with another query is refused rather than silently misapplied.
 * Page sizes (maxMatches, maxBytes, maxFiles) and contextLines may change
 * between pages.
 */
import { canonicalJson } from "../../core/canonical-json";
import { invalidArgument } from "../../core/errors";
import { sha256Hex } from "../../core/hash";

export interface CursorPosition {
  path: string;
  /** matches of `path` already returned */
  skip: number;
}

export interface QueryIdentity {
  pattern: string;
  fixedStrings: boolean;
  caseInsensitive: boolean;
  queryKey: string;
}

export function queryIdentity(q: QueryIdentity): string {
  return sha256Hex(canonicalJson({ ci: q.caseInsensitive, fixed: q.fixedStrings, key: q.queryKey, pattern: q.pattern })).slice(0, 32);
}

export function encodeCursor(identity: string, pos: CursorPosition): string {
  return Buffer.from(canonicalJson({ m: pos.skip, p: pos.path, q: identity, v: 1 }), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, identity: string): CursorPosition {
  const malformed = () =>
    invalidArgument("cursor is not one this grep returned; pass the `cursor` value from the previous page unchanged", {
      arg: "cursor",
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw malformed();
  }
  const c = parsed as Record<string, unknown> | null;
  if (
    !c ||
    typeof c !== "object" ||
    c.v !== 1 ||
    typeof c.q !== "string" ||
    typeof c.p !== "string" ||
    !Number.isSafeInteger(c.m) ||
    (c.m as number) < 0
  ) {
    throw malformed();
  }
  if (c.q !== identity) {
    throw invalidArgument(
      "cursor belongs to a different grep (pattern, flags, paths or tree changed); start again without a cursor",
      { arg: "cursor" },
    );
  }
  return { path: c.p, skip: c.m as number };
}
