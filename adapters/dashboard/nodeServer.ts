/**
 * The dashboard on node:http: a small bridge from Node's request/response to the web-standard
 * handler (no extra dependency), and `serveDashboard`, which listens on 127.0.0.1 unless told.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type AddressInfo, isIP } from "node:net"
import { Readable } from "node:stream"
import { InvalidArgument } from "../../src/broker/errors.js"
import { createDashboardHandler, type DashboardOptions } from "./handler.js"
import { isLoopback } from "./hosts.js"

/** The largest request body the bridge reads (batch actions send a list of task ids). */
const maxBodyBytes = 1_000_000

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (c: Buffer) => {
      size += c.length
      if (size > maxBodyBytes) {
        // Stop keeping it, but read the rest (discarded) so the 413 reaches the client.
        req.off("data", onData)
        req.resume()
        reject(new RangeError(`request body over ${maxBodyBytes} bytes`))
      } else chunks.push(c)
    }
    req.on("data", onData)
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/**
 * The request's URL. A Host header that makes no plain URL (say "a b", or "user@host") is left for
 * the handler to refuse: the URL then gets a stand-in host, and the header goes through as sent.
 */
const requestUrl = (req: IncomingMessage): URL => {
  const standIn = () => new URL(req.url ?? "/", "http://host-header.invalid")
  try {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`)
    return url.username === "" && url.password === "" ? url : standIn()
  } catch {
    return standIn()
  }
}

/** A Node `(req, res)` listener serving a web-standard handler. */
export const toNodeListener =
  (handler: (request: Request, info?: { readonly clientAddress?: string | undefined }) => Promise<Response>) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    void (async () => {
      const url = requestUrl(req)
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers)) {
        if (v === undefined) continue
        if (Array.isArray(v)) for (const x of v) headers.append(k, x)
        else headers.set(k, v)
      }
      const method = req.method ?? "GET"
      const body = method === "GET" || method === "HEAD" ? undefined : await readBody(req)
      const request = new Request(url, {
        method,
        headers,
        ...(body !== undefined && body.length > 0 ? { body: new Uint8Array(body) } : {})
      })
      const response = await handler(request, { clientAddress: req.socket.remoteAddress })
      const out: Record<string, string | Array<string>> = {}
      response.headers.forEach((value, key) => {
        if (key === "set-cookie") return
        out[key] = value
      })
      const cookies = response.headers.getSetCookie()
      if (cookies.length > 0) out["set-cookie"] = cookies
      res.writeHead(response.status, out)
      if (response.body === null || method === "HEAD") res.end()
      else Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>).pipe(res)
    })().catch((e: unknown) => {
      if (!res.headersSent) {
        const tooBig = e instanceof RangeError
        res.writeHead(tooBig ? 413 : 500, { "content-type": "application/json; charset=utf-8", connection: "close" })
        res.end(
          JSON.stringify({
            error: {
              code: tooBig ? "PayloadTooLarge" : "InternalError",
              message: e instanceof Error ? e.message : String(e)
            }
          })
        )
      } else res.destroy()
    })
  }

export interface ServeDashboardOptions extends DashboardOptions {
  /** The port to listen on (0: any free port). Default 8080. */
  readonly port?: number
  /**
   * The interface to bind. Default 127.0.0.1 (this machine only). A host name given here is also
   * answered (added to `allowedHosts`). On any address but this machine's own (127.x, ::1,
   * localhost), `allowActions` requires a `token`.
   */
  readonly host?: string
}

/**
 * Why these options must not be served, or undefined: actions on an address other machines reach
 * need a token (else anyone on the network could delete tasks).
 */
export const serveOptionsProblem = (options: ServeDashboardOptions): InvalidArgument | undefined => {
  const host = options.host ?? "127.0.0.1"
  if (options.allowActions === true && options.token === undefined && !isLoopback(host))
    return new InvalidArgument({
      field: "token",
      message: `actions are allowed on ${host}, which other machines can reach, without a token: set a token (--token or EFFECT_ASYNQ_DASH_TOKEN; token in code), bind 127.0.0.1, or leave actions off`
    })
  return undefined
}

/** A dashboard served by a Node HTTP server of its own (`serveDashboard`). */
export interface DashboardServer {
  /** The address it listens on, e.g. http://127.0.0.1:8080/ (with the base path). */
  readonly url: string
  readonly port: number
  readonly server: Server
  /** Stops listening and closes the Redis connection. */
  readonly close: () => Promise<void>
}

/**
 * Starts the dashboard on a Node HTTP server (127.0.0.1:8080 unless told). Rejects with an
 * InvalidArgument when the options are unsafe or malformed (see serveOptionsProblem, allowedHosts).
 */
export const serveDashboard = async (options: ServeDashboardOptions = {}): Promise<DashboardServer> => {
  const problem = serveOptionsProblem(options)
  if (problem !== undefined) throw problem
  const host = options.host ?? "127.0.0.1"
  // A name the server is bound to is its own: answered like localhost.
  const boundName = isIP(host.replace(/^\[|\]$/g, "")) === 0 ? [host] : []
  const allowedHosts =
    options.allowedHosts === undefined
      ? boundName
      : Array.isArray(options.allowedHosts)
        ? [...options.allowedHosts, ...boundName]
        : options.allowedHosts
  const handler = createDashboardHandler({ ...options, allowedHosts })
  const server = createServer(toNodeListener(handler))
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(options.port ?? 8080, host, () => {
        server.off("error", reject)
        resolve()
      })
    })
  } catch (e) {
    await handler.close()
    throw e
  }
  const port = (server.address() as AddressInfo).port
  const shownHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host
  const basePath = (options.basePath ?? "").replace(/\/+$/, "")
  let closing: Promise<void> | undefined
  return {
    url: `http://${shownHost}:${port}${basePath.startsWith("/") || basePath === "" ? basePath : `/${basePath}`}/`,
    port,
    server,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }).then(() => handler.close()))
  }
}
