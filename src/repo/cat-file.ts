import { internal, notFound } from "../core/errors";
import { gitEnv, spawnWhenDescriptorsFree } from "./git";

/**
 * A long-lived `git cat-file --batch` over one object directory: reads many
 * blobs with one process. Requests are served strictly in order. One per
 * object store for the life of the process, so it takes no slot of git.ts's
 * limit (it would hold one for good); its start waits out a shortage of
 * file descriptors like every other git spawn.
 */
export class CatFileBatch {
  private proc: ReturnType<typeof Bun.spawn> | null = null;
  private reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> } | null = null;
  private buf = new Uint8Array(0);
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly gitDir: string) {}

  /**
   * Requests are written at once and answers read in order, so many reads are
   * in flight together (git answers while we are still asking).
   */
  read(oid: string): Promise<Uint8Array> {
    const started = this.proc ? Promise.resolve() : (this.starting ??= this.start());
    const asked = started.then(() => {
      const stdin = this.proc!.stdin as import("bun").FileSink;
      stdin.write(`${oid}\n`);
      void stdin.flush();
    });
    // asked in call order (the start is shared), answered in the same order
    const next = this.chain.then(async () => {
      await asked;
      return this.readAnswer(oid);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private starting: Promise<void> | null = null;

  private async start(): Promise<void> {
    try {
      this.proc = await spawnWhenDescriptorsFree(() =>
        Bun.spawn(["git", `--git-dir=${this.gitDir}`, "cat-file", "--batch"], {
          env: gitEnv(),
          stdin: "pipe",
          stdout: "pipe",
          stderr: "ignore",
        }),
      );
      this.reader = (this.proc.stdout as ReadableStream<Uint8Array>).getReader();
      this.buf = new Uint8Array(0);
    } finally {
      this.starting = null;
    }
  }

  private async readAnswer(oid: string): Promise<Uint8Array> {
    const header = new TextDecoder().decode(await this.readLine());
    const parts = header.split(" ");
    if (parts[1] === "missing") throw notFound(`object ${oid} is missing from the store`, { oid });
    const size = Number(parts[2]);
    if (parts.length !== 3 || !Number.isFinite(size)) throw internal(`unexpected cat-file header ${header}`);
    const body = await this.readExactly(size + 1);
    return body.subarray(0, size);
  }

  private async fill(): Promise<void> {
    const { value, done } = await this.reader!.read();
    if (done || !value) {
      this.close();
      throw internal("git cat-file ended unexpectedly");
    }
    const merged = new Uint8Array(this.buf.length + value.length);
    merged.set(this.buf);
    merged.set(value, this.buf.length);
    this.buf = merged;
  }

  private async readLine(): Promise<Uint8Array> {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.subarray(nl + 1);
        return line;
      }
      await this.fill();
    }
  }

  private async readExactly(n: number): Promise<Uint8Array> {
    if (this.buf.length >= n) {
      const out = this.buf.slice(0, n);
      this.buf = this.buf.subarray(n);
      return out;
    }
    const out = new Uint8Array(n);
    let have = this.buf.length;
    out.set(this.buf);
    this.buf = new Uint8Array(0);
    while (have < n) {
      const { value, done } = await this.reader!.read();
      if (done || !value) {
        this.close();
        throw internal("git cat-file ended unexpectedly");
      }
      const take = Math.min(value.length, n - have);
      out.set(value.subarray(0, take), have);
      have += take;
      if (take < value.length) this.buf = value.slice(take);
    }
    return out;
  }

  close(): void {
    try {
      (this.proc?.stdin as import("bun").FileSink | undefined)?.end();
      this.proc?.kill();
    } catch {
      // already gone
    }
    this.proc = null;
    this.reader = null;
  }
}
