import { canonicalJson } from "../core/canonical-json";
import { tooLarge } from "../core/errors";
import { type PublicError, publicError } from "../core/public-error";

/** Keeps every answer well under Claude Code's 25,000-token default cap. */
export const MAX_RESPONSE_BYTES = 90_000;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  /** Absent for a text-only tool (no output schema). */
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** How a tool's answers are rendered; by default the text is the JSON of structuredContent. */
export interface ResultShape {
  /** The text the model reads for an answer. */
  text?: (out: Record<string, unknown>) => string;
  /** The text of an error answer (given the error as the client may see it). */
  errorText?: (err: PublicError) => string;
  /** false: a text-only tool, no structuredContent. */
  structured?: boolean;
}

/** Success: content[0].text is exactly the JSON of structuredContent (DESIGN decision 11), unless the tool renders its own. */
export function successResult(out: Record<string, unknown>, shape: ResultShape = {}): ToolResult {
  const text = shape.text ? shape.text(out) : canonicalJson(out);
  if (text.length > MAX_RESPONSE_BYTES) {
    return errorResult(
      tooLarge(`the answer would be ${text.length} bytes; narrow the request (paths, limit, line range)`, { bytes: text.length, limit: MAX_RESPONSE_BYTES }),
      null,
      shape,
    );
  }
  return shape.structured === false ? { content: [{ type: "text", text }] } : { content: [{ type: "text", text }], structuredContent: out };
}

/**
 * The one place MCP maps errors: isError plus {error:{code,message,details}},
 * in text too. The client may be a model on another machine: paths under
 * `root` are shown repo-relative, other absolute paths in system or git text
 * only by their last name, and never a stack trace (publicError); the server
 * logs the original on its stderr.
 */
export function errorResult(err: unknown, root: string | null = null, shape: ResultShape = {}): ToolResult {
  const e = publicError(err, { root, foreignPaths: "redact" });
  const structured = { error: { code: e.code, message: e.message, details: e.details } };
  const text = shape.errorText ? shape.errorText(e) : canonicalJson(structured);
  if (shape.structured === false) return { content: [{ type: "text", text }], isError: true };
  return { content: [{ type: "text", text }], structuredContent: structured, isError: true };
}
