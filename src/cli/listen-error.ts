import { invalidArgument, type WorksnapError } from "../core/errors";

/**
 * Why a server could not listen, said as the person who chose the address
 * can act on it (`serve --http`, `history review --port`); null for a failure
 * that is not about the address (rethrown as it is). `otherPort` says how to
 * choose another port.
 */
export function listenError(err: unknown, hostname: string, port: number, otherPort: string): WorksnapError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const details = { host: hostname, port };
  switch (code) {
    case "EADDRINUSE":
      return invalidArgument(`port ${port} on ${hostname} is in use; ${otherPort}`, details);
    case "EACCES":
      return invalidArgument(`listening on ${where} is not permitted to this user (ports below 1024 need privileges); ${otherPort}`, details);
    case "EADDRNOTAVAIL":
      return invalidArgument(`${hostname} is not an address of this machine, so nothing can be served at ${where}; use 127.0.0.1 (the default) or one of this machine's addresses`, details);
    case "EINVAL":
      return invalidArgument(`cannot listen at ${where}: ${hostname} is neither an address of this machine nor a name that resolves to one`, details);
    default:
      return null;
  }
}
