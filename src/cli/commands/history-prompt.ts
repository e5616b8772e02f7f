/** The one question `worksnap history` asks, on a terminal only (rule 9.2: discard outside changes?). */
import { isTerminal, stderr } from "../output";

/** A person is at the keyboard: both stdin and stderr are terminals. */
export function interactive(): boolean {
  return isTerminal(0) && isTerminal(2);
}

/** Asks on stderr and reads one line from stdin; only "y" or "yes" is a yes. */
export async function askYesNo(question: string): Promise<boolean> {
  stderr(question);
  const answer = await readLine();
  return /^\s*y(es)?\s*$/i.test(answer);
}

function readLine(): Promise<string> {
  return new Promise((resolve) => {
    let buf = "";
    const finish = (line: string) => {
      process.stdin.off("data", onData);
      process.stdin.off("end", onEnd);
      process.stdin.pause();
      resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      buf += chunk.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) finish(buf.slice(0, nl).replace(/\r$/, ""));
    };
    const onEnd = () => finish(buf);
    process.stdin.on("data", onData);
    process.stdin.on("end", onEnd);
    process.stdin.resume();
  });
}
