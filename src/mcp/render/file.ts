import type { FileResult } from "../../ops/snapshot/file";
import { leaseTag, line, lines, pathText, short, size } from "./text";

/**
 * snapshot_file: one header line, then the content exactly as it is (not
 * JSON-escaped). The header names the path with its line range
 * (`path:40-79 of 310`), the blob prefix (expected_blob takes it back) and the
 * lease. A file without a final newline says so the way a diff does, so a
 * patch built from the text gets its last line right.
 */
export function renderFile(out: FileResult): string {
  const range = out.start_line !== undefined ? `:${out.start_line}-${out.end_line}${out.total_lines !== undefined ? ` of ${out.total_lines}` : ""}` : "";
  const head = line(
    `${pathText(out.path)}${out.resolved_path !== undefined ? ` → ${pathText(out.resolved_path)}` : ""}${range}`,
    out.type === "symlink" && "symlink",
    out.encoding === "base64" && `binary, ${size(out.size)}`,
    out.blob !== undefined && `blob ${short(out.blob)}`,
    leaseTag(out),
  );
  if (out.content === "") return lines(head, out.start_line !== undefined ? "(no lines in range)" : "(empty)");
  const body = out.content.endsWith("\n") ? out.content.slice(0, -1) : out.content;
  const lastLineShown = out.start_line === undefined || (out.total_lines !== undefined && out.end_line === out.total_lines);
  const noNewline = out.encoding === "utf8" && out.type === "file" && !out.content.endsWith("\n") && lastLineShown;
  const cut = out.truncated ? `… cut at the size limit after line ${out.end_line}; continue with start_line ${(out.end_line ?? 0) + 1}` : null;
  // The body goes in as it is: a file holding one empty line is a head and an empty line, not a head alone.
  return `${head}\n${body}${noNewline ? "\n\\ No newline at end of file" : ""}${cut ? `\n${cut}` : ""}`;
}
