import { type ErrorCode, WorksnapError } from "../../src/core/errors";

/** The WorksnapError a call fails with (of `code`, when given); anything else, or success, fails the test. */
export async function failure(call: Promise<unknown>, code?: ErrorCode): Promise<WorksnapError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof WorksnapError && (code === undefined || err.code === code)) return err;
    throw err;
  }
  throw new Error(`expected ${code ?? "an error"}, the call succeeded`);
}
