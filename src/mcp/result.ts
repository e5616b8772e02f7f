import { canonicalJson } from "../core/canonical-json";
import { tooLarge } from "../core/errors";
import { publicError } from "../core/public-error";

/** Keeps every answer well under Claude Code's 25,000-token default cap. */
export const MAX_RESPONSE_BYTES = 90_000;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** Success: content[0].text is exactly the JSON of structuredContent (DESIGN decision 11). */
export function successResult(out: Record<string, unknown>): ToolResult {
  const text = canonicalJson(out);
  if (text.length > MAX_RESPONSE_BYTES) {
    return errorResult(
      tooLarge(`the answer would be ${text.length} bytes; narrow the request (paths, limit, line range)`, { bytes: text.length, limit: MAX_RESPONSE_BYTES }),
    );
  }
  return { content: [{ type: "text", text }], structuredContent: out };
}

/**
 * The one place MCP maps errors: isError plus {error:{code,message,details}},
 * in text too. The client may be a model on another machine: paths under
 * `root` are shown repo-relative, other absolute paths in system or git text
 * only by their last name, and never a stack trace (publicError); the server
 * logs the original on its stderr.
 */
export function errorResult(err: unknown, root: string | null = null): ToolResult {
  const e = publicError(err, { root, foreignPaths: "redact" });
  const structured = { error: { code: e.code, message: e.message, details: e.details } };
  return { content: [{ type: "text", text: canonicalJson(structured) }], structuredContent: structured, isError: true };
}
