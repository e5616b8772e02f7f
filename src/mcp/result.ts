import { canonicalJson } from "../core/canonical-json";
import { tooLarge } from "../core/errors";
import { type PublicError, publicError } from "../core/public-error";
import { renderError } from "./render/error";

/** Keeps every answer well under Claude Code's 25,000-token default cap. */
export const MAX_RESPONSE_BYTES = 90_000;

/**
 * What content[0].text holds. "compact" (the default): each tool's rendering
 * for a model (src/mcp/render/), while structuredContent carries the full
 * answer. "json" (`serve --text json`): the canonical JSON of
 * structuredContent, for clients that parse the text.
 */
export type TextMode = "compact" | "json";

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  /** Absent for a text-only tool. */
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * A text-only tool (no output schema, the task tools): the text is the whole
 * answer, in every text mode (there is no structuredContent whose JSON it
 * could be), and errors take the tool's own text.
 */
export interface TextOnly {
  errorText?: (err: PublicError) => string;
}

/**
 * Success: structuredContent is the answer; its text is the tool's rendering
 * (or the JSON). The size cap applies to both parts, as both are sent: an
 * answer either of whose parts is over it becomes TOO_LARGE.
 */
export function successResult(
  out: Record<string, unknown>,
  render: ((out: Record<string, unknown>) => string) | undefined,
  mode: TextMode = "compact",
  textOnly?: TextOnly,
): ToolResult {
  if (textOnly && render) {
    const text = render(out);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_RESPONSE_BYTES) return errorResult(tooLarge(`the answer would be ${bytes} bytes; narrow the request`, { bytes, limit: MAX_RESPONSE_BYTES }), null, mode, textOnly);
    return { content: [{ type: "text", text }] };
  }
  const json = canonicalJson(out);
  const text = mode === "json" || render === undefined ? json : render(out);
  const bytes = Math.max(Buffer.byteLength(json), text === json ? 0 : Buffer.byteLength(text));
  if (bytes > MAX_RESPONSE_BYTES) {
    return errorResult(tooLarge(`the answer would be ${bytes} bytes; narrow the request (paths, limit, line range)`, { bytes, limit: MAX_RESPONSE_BYTES }), null, mode);
  }
  return { content: [{ type: "text", text }], structuredContent: out };
}

/**
 * The one place MCP maps errors: isError plus {error:{code,message,details}}.
 * The text carries everything a model needs to recover (hosts drop
 * structuredContent on errors): the compact rendering, or the JSON. The
 * client may be a model on another machine: paths under `root` are shown
 * repo-relative, other absolute paths in system or git text only by their
 * last name, and never a stack trace (publicError); the server logs the
 * original on its stderr.
 */
export function errorResult(err: unknown, root: string | null = null, mode: TextMode = "compact", textOnly?: TextOnly): ToolResult {
  const e = publicError(err, { root, foreignPaths: "redact" });
  if (textOnly) return { content: [{ type: "text", text: textOnly.errorText ? textOnly.errorText(e) : renderError(e) }], isError: true };
  const structured = { error: { code: e.code, message: e.message, details: e.details } };
  return { content: [{ type: "text", text: mode === "json" ? canonicalJson(structured) : renderError(e) }], structuredContent: structured, isError: true };
}
