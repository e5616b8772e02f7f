/**
 * The review page in a real browser (headless Chromium): an agent edits
 * through the compiled server (MCP SDK client), a person reviews in the page
 * that `worksnap history review` serves, and the files on disk and the CLI
 * agree with what the page did. Plain directories: no git anywhere.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, historyEntries as status, mcpSession } from "../helpers/binary";
import { edited, numbered, patch, text } from "../helpers/line-patch";
import { launchBrowser, startReviewPage } from "../helpers/review-page";
import { tmpRepo } from "../helpers/tmp-repo";

const card = (id: string) => `.card[data-edit="${id}"]`;


describe("review page (headless Chromium)", () => {
  test("shows the conversation with its diffs; rejecting an edit in the page restores the file on disk, and the CLI sees it", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("line", 30);
    repo.write("src/app.ts", text(base));
    await using agent = await mcpSession(repo.root);
    const r1 = await agent.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.ts", base, 3, 1, ["const first = 1; // FIRST"]) });
    const conv = r1.mcp_conversation_id as string;
    const v1 = edited(base, 3, 1, ["const first = 1; // FIRST"]);
    await agent.call("workspace_apply_patch", { mode: "worktree", patch: patch("src/app.ts", v1, 20, 0, ['export const second = "SECOND";']), mcp_conversation_id: conv });
    const [e1, e2] = status(repo.root).map((e) => e.edit_id);

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    expect(page.url()).toBe(`${server.origin}/`);
    await page.waitForSelector(`section.conv[data-conv="${conv}"]`);
    // Newest first: the second edit's card comes before the first's.
    expect(await page.$$eval(".card", (cards) => cards.map((c) => c.getAttribute("data-edit")))).toEqual([e2, e1]);
    await page.waitForSelector(`${card(e2!)} .diff`);
    const diffText = await page.textContent(`${card(e2!)} .diff`);
    expect(diffText).toContain('export const second = "SECOND";');
    // Syntax colouring and line numbers: the keyword and the string are coloured, the added line is numbered 21.
    expect(await page.$$eval(`${card(e2!)} .d-add .t-kw`, (els) => els.map((e) => e.textContent ?? ""))).toContain("export");
    expect(await page.$$eval(`${card(e2!)} .d-add .t-str`, (els) => els.map((e) => e.textContent ?? ""))).toContain('"SECOND"');
    expect(await page.$eval(`${card(e2!)} .d-add .ln:nth-child(2)`, (e) => e.getAttribute("data-ln"))).toBe("21");

    await page.click(`${card(e1!)} [data-act="reject"]`);
    await page.waitForSelector(`${card(e1!)}[data-status="rejected"]`);
    expect(readFileSync(join(repo.root, "src/app.ts"), "utf8")).toBe(text(edited(base, 20, 0, ['export const second = "SECOND";'])));
    expect(status(repo.root).map((e) => [e.edit_id, e.status])).toEqual([
      [e1!, "rejected"],
      [e2!, "pending"],
    ]);
    await page.waitForSelector(".toast-ok");
    expect(await page.textContent(".toast-ok")).toContain("wrote src/app.ts");
    // Everything the page loaded came from the page's own origin.
    expect(b.requests.filter((u) => !u.startsWith(`${server.origin}/`))).toEqual([]);
  }, 90_000);

  test("accepting a conversation marks every edit accepted; the CLI's decisions reach the open page live", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    const w = await agent.call("workspace_write_file", { mode: "worktree", path: "a.md", content: "# A\n" });
    const conv = w.mcp_conversation_id as string;
    await agent.call("workspace_write_file", { mode: "worktree", path: "b.py", content: "print('b')\n", mcp_conversation_id: conv });
    await agent.call("workspace_write_file", { mode: "worktree", path: "other.txt", content: "other\n", mcp_conversation_id: "another-conv" });

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.waitForSelector('.live[data-state="on"]');
    await page.click(`section.conv[data-conv="${conv}"] [data-act="accept-conv"]`);
    await page.waitForSelector(`section.conv[data-conv="${conv}"] .card[data-status="pending"]`, { state: "detached" });
    expect(status(repo.root).map((e) => [e.conversation_id, e.status])).toEqual([
      [conv, "accepted"],
      [conv, "accepted"],
      ["another-conv", "pending"],
    ]);
    expect(readFileSync(join(repo.root, "b.py"), "utf8")).toBe("print('b')\n");

    // A decision taken in the terminal shows in the page without a reload.
    const other = status(repo.root)[2]!.edit_id;
    expect(cli(["history", "reject", other, "--root", repo.root]).code).toBe(0);
    await page.waitForSelector(`${card(other)}[data-status="rejected"]`);
  }, 90_000);

  test("a reject with a dependent later edit shows the dependency report first; cancel writes nothing, cascade rejects both", async () => {
    await using repo = await tmpRepo({ git: false });
    const base = numbered("row", 20);
    repo.write("f.txt", text(base));
    await using agent = await mcpSession(repo.root);
    const r1 = await agent.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", base, 8, 1, ["CHANGED"]) });
    const v1 = edited(base, 8, 1, ["CHANGED"]);
    await agent.call("workspace_apply_patch", { mode: "worktree", patch: patch("f.txt", v1, 8, 1, ["CHANGED AGAIN"]), mcp_conversation_id: r1.mcp_conversation_id });
    const [e1, e2] = status(repo.root).map((e) => e.edit_id);
    const before = readFileSync(join(repo.root, "f.txt"), "utf8");

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.click(`${card(e1!)} [data-act="reject"]`);
    await page.waitForSelector("#dialog[open] .deps");
    expect(await page.textContent("#dialog .deps")).toContain(e2!.slice(0, 8));
    expect(await page.textContent("#dlg-ok")).toBe("Reject 2 edits");
    await page.click("#dlg-cancel");
    await page.waitForSelector("#dialog[open]", { state: "detached" });
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(before);
    expect(status(repo.root).map((e) => e.status)).toEqual(["pending", "pending"]);

    await page.click(`${card(e1!)} [data-act="reject"]`);
    await page.waitForSelector("#dialog[open] .deps");
    await page.click("#dlg-ok");
    await page.waitForSelector(`${card(e2!)}[data-status="rejected"]`);
    expect(status(repo.root).map((e) => e.status)).toEqual(["rejected", "rejected"]);
    expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(text(base));
  }, 90_000);

  test("a file changed outside the history: the page shows the change and asks; cancel keeps it, confirming discards it", async () => {
    await using repo = await tmpRepo({ git: false });
    repo.write("notes.txt", "original\n");
    await using agent = await mcpSession(repo.root);
    await agent.call("workspace_write_file", { mode: "worktree", path: "notes.txt", content: "original\nagent line\n" });
    const [e1] = status(repo.root).map((e) => e.edit_id);
    writeFileSync(join(repo.root, "notes.txt"), "original\nagent line\nhand-written line\n");

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.click(`${card(e1!)} [data-act="reject"]`);
    await page.waitForSelector("#dialog[open] .ext");
    expect(await page.textContent("#dialog .ext")).toContain("notes.txt");
    expect(await page.textContent("#dialog .ext .d-add")).toContain("hand-written line");
    await page.click("#dlg-cancel");
    await page.waitForSelector("#dialog[open]", { state: "detached" });
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("original\nagent line\nhand-written line\n");
    expect(status(repo.root)[0]!.status).toBe("pending");

    // The file changes again after the page showed it: the review refuses what was not shown, and asks again.
    await page.click(`${card(e1!)} [data-act="reject"]`);
    await page.waitForSelector("#dialog[open] .ext");
    writeFileSync(join(repo.root, "notes.txt"), "original\nagent line\nhand-written line\nand another\n");
    await page.click("#dlg-ok");
    await page.locator("#dialog[open] .ext", { hasText: "and another" }).waitFor();
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toContain("and another");
    await page.click("#dlg-ok");
    await page.waitForSelector(`${card(e1!)}[data-status="rejected"]`);
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("original\n");
  }, 90_000);

  test("live: an edit an agent records while the page is open appears without a reload; keyboard j/k/a review it", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    const w = await agent.call("workspace_write_file", { mode: "worktree", path: "one.txt", content: "1\n" });
    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.waitForSelector('.live[data-state="on"]');
    expect(await page.$$(".card")).toHaveLength(1);

    await agent.call("workspace_write_file", { mode: "worktree", path: "two.txt", content: "2\n", mcp_conversation_id: w.mcp_conversation_id });
    const second = status(repo.root)[1]!.edit_id;
    await page.waitForSelector(card(second));
    const first = status(repo.root)[0]!.edit_id;

    // The selection stays on the edit the person was looking at; k moves up to the new one, j down again.
    await page.waitForSelector(`${card(first)}.selected`);
    await page.keyboard.press("k");
    await page.waitForSelector(`${card(second)}.selected`);
    await page.keyboard.press("j");
    await page.waitForSelector(`${card(first)}.selected`);
    await page.keyboard.press("k");
    await page.waitForSelector(`${card(second)}.selected`);
    await page.keyboard.press("a");
    await page.waitForSelector(`${card(second)}[data-status="accepted"]`);
    expect(status(repo.root).map((e) => e.status)).toEqual(["pending", "accepted"]);
    await page.keyboard.press("j");
    await page.keyboard.press("r");
    await page.waitForSelector(`${card(first)}[data-status="rejected"]`);
    expect(readFileSync(join(repo.root, "two.txt"), "utf8")).toBe("2\n");
    expect(status(repo.root).map((e) => e.status)).toEqual(["rejected", "accepted"]);
  }, 90_000);

  test("readable on a narrow window and in the dark theme: no horizontal page scroll, the actions stay reachable", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    await agent.call("workspace_write_file", { mode: "worktree", path: `deeply/nested/directory/with/a/long/path/${"x".repeat(60)}.ts`, content: `export const value = "${"y".repeat(200)}";\n` });
    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser({ width: 390, height: 800, colorScheme: "dark" });
    const { page } = b;
    await page.goto(server.url);
    await page.waitForSelector(".card .diff");
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    const reject = await page.$('.card [data-act="reject"]');
    const box = (await reject!.boundingBox())!;
    expect(box.x >= 0 && box.x + box.width <= 390).toBe(true);
    // Dark theme: light text on a dark background.
    const [bg, fg] = (await page.evaluate("[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]")) as string[];
    const lum = (c: string) => c.match(/\d+/g)!.slice(0, 3).map(Number).reduce((a, v) => a + v, 0);
    expect(lum(bg!)).toBeLessThan(150);
    expect(lum(fg!)).toBeGreaterThan(500);
  }, 90_000);

  test("--open hands the printed URL to the system's opener, and the page it opens works; without an opener the page still serves and says so", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    await agent.call("workspace_write_file", { mode: "worktree", path: "opened.txt", content: "opened by the browser\n" });
    // The opener on PATH (xdg-open here, `open` on macOS) records what it was asked to open.
    const bin = mkdtempSync(join(tmpdir(), "ws-opener-"));
    const asked = join(bin, "asked");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${asked}.tmp' && mv '${asked}.tmp' '${asked}'\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    try {
      {
        await using server = await startReviewPage(repo.root, undefined, { args: ["--open"], env: { PATH: `${bin}:${process.env.PATH}` } });
        const deadline = Date.now() + 10_000;
        while (!existsSync(asked) && Date.now() < deadline) await Bun.sleep(20);
        expect(readFileSync(asked, "utf8")).toBe(`${server.url}\n`);
        await using b = await launchBrowser();
        await b.page.goto(readFileSync(asked, "utf8").trim());
        await b.page.waitForSelector(".card .diff");
        expect(await b.page.textContent(".card .diff")).toContain("opened by the browser");
      }
      // No opener at all: the URL is printed, the page serves, and stderr says to open it by hand.
      await using server = await startReviewPage(repo.root, undefined, { args: ["--open"], env: { PATH: join(bin, "none") } });
      const deadline = Date.now() + 10_000;
      while (!server.stderr().includes("Could not start a browser") && Date.now() < deadline) await Bun.sleep(20);
      expect(server.stderr()).toContain("Could not start a browser (xdg-open); open the URL above yourself.");
      await using b = await launchBrowser();
      await b.page.goto(server.url);
      await b.page.waitForSelector(".card .diff");
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 90_000);

  test("a long history is drawn a page at a time: 200 edits, then 200 more on request, and j past the last drawn edit draws the next page", async () => {
    await using repo = await tmpRepo({ git: false });
    await using agent = await mcpSession(repo.root);
    const n = 450;
    const names = Array.from({ length: n }, (_, i) => `many/f${String(i).padStart(3, "0")}.txt`);
    const created = names.map((name, i) => `--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+file ${i}\n`).join("");
    const r = await agent.call("workspace_apply_patch", { mode: "worktree", patch: created });
    expect(r.applied).toBe(true);
    expect(status(repo.root)).toHaveLength(n);

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.waitForSelector(".card");
    const cards = () => page.$$eval(".card", (els) => els.length);
    // polled from here: the page's CSP forbids the eval that a string predicate in the page needs
    const waitForCards = async (n: number) => {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await Bun.sleep(25)) if ((await cards()) === n) return;
      expect(await cards()).toBe(n);
    };
    expect(await cards()).toBe(200);
    expect(await page.textContent(".more-edits")).toBe("Show 200 more edits (250 not shown)");
    // The counts speak of the whole history, not of what is drawn.
    expect(await page.textContent("#summary")).toContain(`${n} pending`);

    // Activated from the keyboard, not by a click at coordinates: the open cards' diffs load as they come into view
    // while the button is scrolled to, and move it under a pointer (a click there can land on a card).
    await page.press(".more-edits", "Enter");
    await waitForCards(400);
    expect(await page.textContent(".more-edits")).toBe("Show 50 more edits (50 not shown)");

    // A filter starts again at one page; moving past the last drawn edit with j draws the next page.
    await page.fill("#file-filter", "many/");
    await waitForCards(200);
    const ids = await page.$$eval(".card", (els) => els.map((e) => e.getAttribute("data-edit")!));
    await page.$eval(`${card(ids[199]!)} .path`, (el) => (el as unknown as { click(): void }).click());
    await page.keyboard.press("Escape");
    await page.keyboard.press("j");
    await waitForCards(400);
    const selected = await page.$eval(".card.selected", (e) => e.getAttribute("data-edit"));
    const drawnIds = await page.$$eval(".card", (els) => els.map((e) => e.getAttribute("data-edit")!));
    expect(drawnIds.indexOf(selected!)).toBe(200);

    await page.press(".more-edits", "Enter");
    await waitForCards(n);
    expect(await page.$(".more-edits")).toBeNull();
  }, 120_000);

  test("names and contents an agent chose are shown as text: markup in a file's name, its bytes or a rename runs nothing in the reviewer's page", async () => {
    await using repo = await tmpRepo({ git: false });
    const name = '<img src=x onerror="window.__pwned=1">.html';
    const moved = '"><svg onload="window.__pwned=2">.txt';
    repo.write("plain.txt", "plain\n");
    await using agent = await mcpSession(repo.root);
    const r = await agent.call("workspace_write_file", { mode: "worktree", path: name, content: '<script>window.__pwned=3</script>\n<img src=x onerror="window.__pwned=4">\n' });
    const conv = r.mcp_conversation_id as string;
    await agent.call("workspace_move", { mode: "worktree", from: "plain.txt", to: moved, mcp_conversation_id: conv });
    const [created, move] = status(repo.root).map((e) => e.edit_id);

    await using server = await startReviewPage(repo.root);
    await using b = await launchBrowser();
    const { page } = b;
    await page.goto(server.url);
    await page.waitForSelector(`${card(created!)} .diff`);
    expect(await page.textContent(`${card(created!)} .path`)).toBe(name);
    expect(await page.textContent(`${card(move!)} .path`)).toBe(`plain.txt→${moved}`);
    expect(await page.textContent(`${card(created!)} .diff`)).toContain("<script>window.__pwned=3</script>");
    await page.fill("#file-filter", "<img");
    await page.fill("#file-filter", "");
    // reject the creation: the toast names the deleted file as text
    await page.click(`${card(created!)} [data-act="reject"]`);
    await page.waitForSelector(".toast-ok");
    expect(await page.textContent(".toast-ok")).toContain(`deleted ${name}`);
    expect(existsSync(join(repo.root, name))).toBe(false);
    await Bun.sleep(300); // an image's error handler would have run by now
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned ?? null)).toBeNull();
    expect(await page.$$eval("img, svg[onload], script:not([src])", (els) => els.length)).toBe(0);
  }, 90_000);
});
