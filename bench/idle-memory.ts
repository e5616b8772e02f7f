/**
 * What a pause costs memory on this machine: memory a process touched, and
 * file data in the page cache, touched again after 0 to 3 seconds of idling.
 *
 * On a bare machine the second touch costs the same after any pause. On a
 * virtual machine whose host takes back guest memory left idle (balloon,
 * free-page reporting, dirty-page tracking for snapshots), the first touch of
 * each 4 KiB page after a pause is a fault in the host: a process that slept
 * before its work pays for every page it touches, and so does a read of file
 * data still in the page cache. bench/apply.ts's "server's first write" waits
 * 1.5 s before its call (a server waits for its host); this tool says how much
 * of its time the pause alone explains here. Last, what new memory costs the
 * first time it is touched (a fault per page on any machine; in such a VM
 * one in the host as well).
 *
 *   node_modules/.bin/bun bench/idle-memory.ts [--runs N] [--mb N]
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { argValue, fmtMs, machineLine, median, runMain, table } from "./lib.ts";

const PAUSES_MS = [0, 100, 250, 500, 1000, 1500, 3000];
const PAGE = 4096;

const CHUNK = new Uint8Array(1024 * 1024);

/** The whole file through one 1 MiB buffer (its 256 pages are all the process's memory it touches). */
function readThrough(file: string): number {
  const fd = openSync(file, "r");
  try {
    let n = 0;
    for (let r; (r = readSync(fd, CHUNK, 0, CHUNK.length, n)) > 0; ) n += r;
    return n;
  } finally {
    closeSync(fd);
  }
}

/** Writes one byte of every page of new memory: the pages' first faults. */
function touchNew(bytes: number): number {
  const fresh = new Uint8Array(bytes);
  const t0 = Bun.nanoseconds();
  for (let k = 0; k < fresh.length; k += PAGE) fresh[k] = 1;
  return (Bun.nanoseconds() - t0) / 1e6;
}

/** Reads one byte of every page: the cost is the pages' faults, not the bytes. */
function touch(bytes: Uint8Array): number {
  let sum = 0;
  for (let k = 0; k < bytes.length; k += PAGE) sum += bytes[k]!;
  return sum;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runs = Number(argValue(args, "--runs") ?? 5);
  const mb = Number(argValue(args, "--mb") ?? 64);
  const memory = new Uint8Array(mb * 1024 * 1024).fill(1);
  const dir = mkdtempSync(join(tmpdir(), "ws-idle-"));
  const file = join(dir, "data");
  try {
    writeFileSync(file, memory);
    readThrough(file); // in the page cache from here on
    const rows: string[][] = [];
    let checksum = 0;
    for (const pause of PAUSES_MS) {
      const mem: number[] = [];
      const read: number[] = [];
      for (let r = 0; r < runs; r++) {
        checksum += touch(memory) + readThrough(file);
        await Bun.sleep(pause);
        let t0 = Bun.nanoseconds();
        checksum += touch(memory);
        mem.push((Bun.nanoseconds() - t0) / 1e6);
        await Bun.sleep(pause);
        t0 = Bun.nanoseconds();
        checksum += readThrough(file);
        read.push((Bun.nanoseconds() - t0) / 1e6);
      }
      rows.push([`${pause} ms`, fmtMs(median(mem)), fmtMs(median(read))]);
    }
    console.log(table(["pause before", `touch ${mb} MB a process touched`, `read a ${mb} MB file in the page cache`], rows));
    const fresh = Array.from({ length: runs }, () => touchNew(mb * 1024 * 1024));
    console.log(`touching ${mb} MB of new memory once: ${fmtMs(median(fresh))} (median of ${runs})`);
    console.log(`${machineLine()} (checksum ${checksum})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}

if (import.meta.main) await runMain(main);
