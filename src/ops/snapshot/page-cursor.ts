import { canonicalJson } from "../../core/canonical-json";
import { invalidArgument } from "../../core/errors";
import { sha256Hex } from "../../core/hash";

/**
 * Opaque paging cursors for answers that are cut short. A cursor names the
 * query it belongs to (a digest of the arguments that shape the result) and
 * the state it was computed on (snapshot ids, or the work tree's
 * fingerprint), plus a position. Resuming with another query's cursor, or
 * after the work tree changed, is INVALID_ARGUMENT rather than a wrong page.
 */
export interface CursorKeys {
  /** Which tool the cursor belongs to. */
  tool: string;
  /** The arguments that shape the result (everything except the cursor and page size). */
  query: unknown;
  /** The state the answer was computed on. */
  state: unknown;
}

interface CursorBody<P> {
  t: string;
  q: string;
  s: string;
  p: P;
}

const digest = (v: unknown) => sha256Hex(canonicalJson(v)).slice(0, 24);

export function encodeCursor<P>(keys: CursorKeys, position: P): string {
  const body: CursorBody<P> = { t: keys.tool, q: digest(keys.query), s: digest(keys.state), p: position };
  return Buffer.from(canonicalJson(body)).toString("base64url");
}

/** The position stored in `cursor`, checked against the query it is used with. */
export function decodeCursor<P>(cursor: string, keys: CursorKeys, isPosition: (p: unknown) => p is P): P {
  let body: CursorBody<unknown>;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidArgument("cursor is malformed; pass the cursor string exactly as a previous answer gave it", { arg: "cursor" });
  }
  if (!body || typeof body !== "object" || typeof body.q !== "string" || typeof body.s !== "string" || !isPosition(body.p)) {
    throw invalidArgument("cursor is malformed; pass the cursor string exactly as a previous answer gave it", { arg: "cursor" });
  }
  if (body.t !== keys.tool || body.q !== digest(keys.query)) {
    throw invalidArgument(`cursor belongs to a different query; repeat the original ${keys.tool} arguments with it, or drop the cursor to start over`, {
      arg: "cursor",
    });
  }
  if (body.s !== digest(keys.state)) {
    throw invalidArgument("cursor was issued for another state (the work tree changed since); drop the cursor to start over", { arg: "cursor" });
  }
  return body.p as P;
}
