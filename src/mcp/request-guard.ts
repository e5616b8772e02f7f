import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AnyObjectSchema, SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, Notification, Request, Result, ServerNotification, ServerRequest, ServerResult } from "@modelcontextprotocol/sdk/types.js";
import { JSONRPC, errorReply } from "./jsonrpc-screen";

/** A request schema of the SDK (zod): what `setRequestHandler` parses a request with. */
export interface RequestSchema {
  shape: { method: { value: unknown } };
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/**
 * The SDK's Server, with every request checked before dispatch: each
 * handler's schema is recorded as it is registered (the SDK's own, such as
 * initialize and ping, ours, and any added later), and `connect` puts a
 * GuardedTransport in front of whichever transport it is given.
 */
export class GuardedServer extends Server {
  // `declare`: no field initialiser, which would run after Server's constructor and drop what it registered
  declare private requestSchemas: Map<string, RequestSchema> | undefined;

  override setRequestHandler<T extends AnyObjectSchema>(
    schema: T,
    handler: (request: SchemaOutput<T>, extra: RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>) => ServerResult | Result | Promise<ServerResult | Result>,
  ): void {
    const s = schema as unknown as RequestSchema;
    (this.requestSchemas ??= new Map()).set(methodOf(s), s);
    super.setRequestHandler(schema, handler);
  }

  override connect(transport: Transport): Promise<void> {
    return super.connect(new GuardedTransport(transport, (this.requestSchemas ??= new Map())));
  }
}

/**
 * The transport as the server sees it, whichever transport it is (stdio now,
 * HTTP later): every request of a method the server handles is checked
 * against that method's schema before the SDK dispatches it. The SDK's own
 * handlers throw a parse failure, which it answers as -32603 Internal error
 * carrying zod's JSON; a client that sent bad params gets -32602 naming
 * them. Everything else passes through untouched.
 */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: Transport,
    private readonly schemas: ReadonlyMap<string, RequestSchema>,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion = (version: string): void => this.inner.setProtocolVersion?.(version);

  async start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const m = message as { id?: string | number; method?: string };
    const schema = m.id !== undefined && typeof m.method === "string" ? this.schemas.get(m.method) : undefined;
    if (schema) {
      const parsed = schema.safeParse(message);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "(request)"}: ${i.message}`);
        const id = m.id as string | number;
        const reply = errorReply(id, JSONRPC.invalidParams, `Invalid params for ${m.method}: ${problems.join("; ")}`, { problems });
        this.onerror?.(new Error(`answered ${m.method} #${String(id)} with -32602: ${problems.join("; ")}`));
        this.inner.send(reply as JSONRPCMessage, { relatedRequestId: id }).catch((err: unknown) => this.onerror?.(err as Error));
        return;
      }
    }
    this.onmessage?.(message, extra);
  }
}

/** The method a request schema stands for (`tools/call` for CallToolRequestSchema). */
export function methodOf(schema: RequestSchema): string {
  const method = schema.shape.method.value;
  if (typeof method !== "string") throw new Error("a request schema without a method literal");
  return method;
}
