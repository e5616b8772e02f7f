import { describe, expect, test } from "bun:test";
import { UsageError } from "../../src/cli/args";
import { parseListen } from "../../src/cli/commands/serve";
import { cli } from "../helpers/binary";

describe("serve --http arguments", () => {
  test("[HOST:]PORT: the host defaults to the loopback; IPv6 in brackets", () => {
    expect(parseListen("8765")).toEqual({ hostname: "127.0.0.1", port: 8765 });
    expect(parseListen("0")).toEqual({ hostname: "127.0.0.1", port: 0 });
    expect(parseListen("0.0.0.0:80")).toEqual({ hostname: "0.0.0.0", port: 80 });
    expect(parseListen("localhost:8765")).toEqual({ hostname: "localhost", port: 8765 });
    expect(parseListen("[::1]:8765")).toEqual({ hostname: "::1", port: 8765 });
    for (const bad of ["", "host:", ":80", "99999", "a:b", "::1:80", "8765x"]) expect(() => parseListen(bad)).toThrow(UsageError);
  });

  test("bad values are usage errors (exit 2) before anything is served", () => {
    for (const args of [
      ["--http", "nope"],
      ["--stale-writes", "maybe"],
      ["--idle-timeout", "5m"],
      ["--http", "0", "--idle-timeout", "soon"],
    ]) {
      const r = cli(["serve", ...args], { env: { WORKSNAP_HTTP_TOKEN: "" } });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
    }
    const short = cli(["serve", "--http", "0"], { env: { WORKSNAP_HTTP_TOKEN: "short" } });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("WORKSNAP_HTTP_TOKEN");
  });
});
