import type { WorksnapError } from "../../../src/core/errors";

/** The wire error code a task op fails with (the substrate code when it set none), or "resolved". */
export async function wireCodeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const e = err as WorksnapError;
    return String(e.details?.wire_code ?? e.code ?? err);
  }
  return "resolved";
}
