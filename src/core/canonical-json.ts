import { compareUtf8 } from "./byte-order";
import { invalidArgument } from "./errors";

/**
 * Canonical JSON (spec 1.1): object keys sorted by UTF-8 bytes, compact, only
 * the standard JSON escapes (JSON.stringify's string escaping), arrays in the
 * given order, no trailing newline. `undefined` object members are omitted.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join("");
}

function write(value: unknown, out: string[]): void {
  if (value === null) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(value)) throw invalidArgument(`canonical JSON cannot encode ${value}`);
      out.push(JSON.stringify(value));
      return;
    case "object":
      if (Array.isArray(value)) {
        out.push("[");
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(",");
          write(value[i] === undefined ? null : value[i], out);
        }
        out.push("]");
        return;
      }
      writeObject(value as Record<string, unknown>, out);
      return;
    default:
      throw invalidArgument(`canonical JSON cannot encode a ${typeof value}`);
  }
}

function writeObject(obj: Record<string, unknown>, out: string[]): void {
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareUtf8);
  out.push("{");
  keys.forEach((key, i) => {
    if (i > 0) out.push(",");
    out.push(JSON.stringify(key), ":");
    write(obj[key], out);
  });
  out.push("}");
}
