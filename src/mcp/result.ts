import { canonicalJson } from "../core/canonical-json";
import { asWorksnapError, tooLarge } from "../core/errors";

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

/** The one place MCP maps errors: isError plus {error:{code,message,details}}, in text too. */
export function errorResult(err: unknown): ToolResult {
  const e = asWorksnapError(err);
  const structured = { error: { code: e.code, message: e.message, details: e.details } };
  return { content: [{ type: "text", text: canonicalJson(structured) }], structuredContent: structured, isError: true };
}
