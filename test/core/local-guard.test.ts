import { describe, expect, test } from "bun:test";
import { isLoopbackAddress, isLoopbackHost, isLoopbackOrigin, sameToken } from "../../src/core/local-guard";

describe("local-guard", () => {
  test("sameToken: equal strings only, whatever the lengths", () => {
    expect(sameToken("0123456789abcdef", "0123456789abcdef")).toBe(true);
    expect(sameToken("0123456789abcdee", "0123456789abcdef")).toBe(false);
    expect(sameToken("", "0123456789abcdef")).toBe(false);
    expect(sameToken("0123456789abcdef0", "0123456789abcdef")).toBe(false);
  });

  test("a Host names the loopback at the exact port, never another name or port", () => {
    for (const h of ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]) expect({ h, ok: isLoopbackHost(h, 8765) }).toEqual({ h, ok: true });
    for (const h of [null, "127.0.0.1", "127.0.0.1:8766", "evil.example:8765", "localhost.evil.example:8765", "127.0.0.1:8765.evil", "0.0.0.0:8765"]) {
      expect({ h, ok: isLoopbackHost(h, 8765) }).toEqual({ h, ok: false });
    }
  });

  test("an Origin is http on the loopback at the exact port", () => {
    expect(isLoopbackOrigin("http://127.0.0.1:8765", 8765)).toBe(true);
    expect(isLoopbackOrigin("http://localhost:8765", 8765)).toBe(true);
    for (const o of ["https://localhost:8765", "http://localhost:8766", "http://evil.example", "null", "http://127.0.0.1:8765/"]) {
      expect({ o, ok: isLoopbackOrigin(o, 8765) }).toEqual({ o, ok: false });
    }
  });

  test("loopback addresses: 127.0.0.0/8, ::1, localhost; nothing else", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) expect({ a, ok: isLoopbackAddress(a) }).toEqual({ a, ok: true });
    for (const a of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "127.0.0.1.example.com"]) expect({ a, ok: isLoopbackAddress(a) }).toEqual({ a, ok: false });
  });
});
