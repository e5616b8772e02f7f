import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { WIRE_LABELS, type WireField, parseWire, renderWire, unescapeValue, wireLine, wireValue } from "../../../src/ops/task/wire";

describe("wire values", () => {
  test("spaces are compressed to →, and every whitespace or control run is one →", () => {
    expect(wireValue("jwt validation pattern")).toBe("jwt→validation→pattern");
    expect(wireValue("  a \t\n\r\n b\u0000c  ")).toBe("a→b→c");
    expect(wireValue("line one\nline two")).toBe("line→one→line→two");
  });

  test("| \\ → and … are escaped, so they never break or blur the line", () => {
    expect(wireValue("a|b")).toBe("a\\|b");
    expect(wireValue("c:\\dir")).toBe("c:\\\\dir");
    expect(wireValue("x → y")).toBe("x→\\→→y");
    expect(wireValue("wait…")).toBe("wait\\…");
    expect(unescapeValue(wireValue("x → y")).text).toBe("x → y");
  });

  test("empty is -, a literal - is \\-", () => {
    expect(wireValue("")).toBe("-");
    expect(wireValue("   ")).toBe("-");
    expect(wireValue("-")).toBe("\\-");
    expect(unescapeValue("-").text).toBe("");
    expect(unescapeValue("\\-").text).toBe("-");
  });

  test("a long value is cut at its limit with an unescaped …, never inside an escape or a surrogate pair", () => {
    const cut = wireValue("a".repeat(200), 20);
    expect([...cut].length).toBe(20);
    expect(cut.endsWith("…")).toBe(true);
    expect(unescapeValue(cut).cut).toBe(true);
    const escapes = wireValue("|".repeat(30), 9);
    expect(escapes).toBe("\\|\\|\\|\\|…");
    const astral = wireValue("😀".repeat(30), 5);
    expect([...astral]).toEqual(["😀", "😀", "😀", "😀", "…"]);
  });

  test("property: any text escapes to one field (no raw | or newline) that unescapes to its whitespace-compressed self", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), (raw) => {
        const v = wireValue(raw, 1000);
        expect(v).not.toMatch(/(^|[^\\])(\\\\)*\|/);
        expect(v).not.toMatch(/[\n\r]/);
        const back = unescapeValue(v);
        expect(back.cut).toBe(false);
        const expected = raw.replace(/[\s\p{Cc}\p{Zl}\p{Zp}]+/gu, " ").trim();
        expect(back.text).toBe(expected === "" ? "" : expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe("wire lines", () => {
  const fields: WireField[] = [
    { label: "id", value: "task_1" },
    { label: "snap", value: "3f2a9c1b41aa" },
    { label: "risk", value: "M" },
    { label: "prot", value: "85" },
    { label: "dirty", value: "2" },
    { label: "status", value: "created" },
    { label: "learn", value: wireValue("jwt validation") },
  ];

  test("regression: a quoted title with a line break started a forged wire line in the summary; the summary is one line, without control characters", () => {
    const title = "evil|title\n🧢|S|id:task_999|fake\r\n---\u2028x\u001b[2Jy\u0085z";
    const text = renderWire({ type: "S", fields, summary: `Task started: task_1 "${title}". Low risk.` }, false);
    const lines = text.split(/\r\n|[\n\r\u2028\u2029\u0085]/);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('Task started: task_1 "evil|title 🧢|S|id:task_999|fake --- x [2Jy z". Low risk.');
    expect(parseWire(text).summary).toBe(lines[2]!);
  });

  test("labeled and compact modes carry the same values in the spec's order", () => {
    expect(wireLine("S", fields, false)).toBe("🧢|S|id:task_1|snap:3f2a9c1b41aa|risk:M|prot:85|dirty:2|status:created|learn:jwt→validation");
    expect(wireLine("S", fields, true)).toBe("🧢|S|task_1|3f2a9c1b41aa|M|85|2|created|jwt→validation");
  });

  test("parseWire reads both modes back, labels from the TYPE's field table", () => {
    for (const compact of [false, true]) {
      const p = parseWire(renderWire({ type: "S", fields, summary: "Task started." }, compact));
      expect(p.compact).toBe(compact);
      expect(p.fields).toEqual({ id: "task_1", snap: "3f2a9c1b41aa", risk: "M", prot: "85", dirty: "2", status: "created", learn: "jwt validation" });
      expect(p.summary).toBe("Task started.");
    }
  });

  test("a value holding : keeps it (labels split at the first :)", () => {
    const c: WireField[] = WIRE_LABELS.C.map((label) => ({ label, value: label === "issues" ? "src/a.ts:12,src/b.ts:3" : "✓" }));
    expect(parseWire(renderWire({ type: "C", fields: c, summary: "" }, false)).fields.issues).toBe("src/a.ts:12,src/b.ts:3");
  });

  test("positional fields follow the labeled ones; R list and R restore are told apart in both modes", () => {
    const list: WireField[] = [{ label: "count", value: "2" }, { value: "aa11bb22cc33:5m:3f" }, { value: "dd44ee55ff66:2h:1f" }];
    const restore: WireField[] = [{ label: "status", value: "OK" }, { label: "files", value: "2" }, { value: "src/a.ts" }, { value: wireValue("dir/with|bar.ts") }];
    for (const compact of [false, true]) {
      const l = parseWire(renderWire({ type: "R", fields: list, summary: "" }, compact));
      expect(l.fields).toEqual({ count: "2" });
      expect(l.rest).toEqual(["aa11bb22cc33:5m:3f", "dd44ee55ff66:2h:1f"]);
      const r = parseWire(renderWire({ type: "R", fields: restore, summary: "" }, compact));
      expect(r.fields).toEqual({ status: "OK", files: "2" });
      expect(r.rest).toEqual(["src/a.ts", "dir/with|bar.ts"]);
    }
  });

  test("a malformed line is refused, not guessed", () => {
    expect(() => parseWire("hello")).toThrow();
    expect(() => parseWire("🧢|Q|x\n---\n")).toThrow();
    expect(() => parseWire("🧢|S|id:task_1\n---\n")).toThrow(/needs 7 fields/);
  });
});
