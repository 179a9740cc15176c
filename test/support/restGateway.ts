/**
 * A loopback HTTP gateway speaking the part of Upstash's Redis REST protocol that
 * `effect-asynq/edge` uses, in front of a real redis-server (tests start it; no Upstash needed):
 *
 * - `POST /` with a JSON array `[command, ...args]` → `{"result": …}`, or HTTP 400 `{"error": "…"}`
 * - `POST /pipeline` with an array of such arrays → an array of `{"result"}` / `{"error"}`, run in order
 * - `Authorization: Bearer <token>` required (401 `{"error": "Unauthorized"}` otherwise)
 * - `Upstash-Encoding: base64`: bulk strings of the result base64-encoded ("OK" as is), so bytes survive JSON
 *
 * Arguments reach Redis as the UTF-8 of the JSON strings (numbers as their decimal text), as on
 * Upstash. Every request is recorded (path and commands) for the tests to look at.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Redis as IORedis } from "ioredis"

export interface GatewayRequest {
  readonly path: string
  readonly commands: ReadonlyArray<ReadonlyArray<unknown>>
}

export interface RestGateway {
  /** The REST URL (http://127.0.0.1:<port>). */
  readonly url: string
  readonly token: string
  /** The requests answered so far (authorized or not). */
  readonly requests: Array<GatewayRequest>
  /** Runs the next `n` authorized requests, then closes their connections without answering (a lost reply). */
  dropAnswers(n: number): void
  /** Runs the next `n` authorized requests and never answers them (until close). */
  stallAnswers(n: number): void
  /**
   * Holds the authorized requests carrying a command that `matches` until `n` of them have come,
   * then runs them all (so that many callers are provably at the same point at once).
   */
  gather(matches: (command: ReadonlyArray<unknown>) => boolean, n: number): void
  close(): Promise<void>
}

type Reply = Buffer | string | number | null | ReadonlyArray<Reply>

const encode = (r: Reply, base64: boolean): unknown => {
  if (Buffer.isBuffer(r)) {
    const text = r.toString("utf8")
    return base64 && text !== "OK" ? r.toString("base64") : text
  }
  if (typeof r === "string") return base64 && r !== "OK" ? Buffer.from(r).toString("base64") : r
  if (Array.isArray(r)) return r.map((x) => encode(x, base64))
  return r
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const isCommand = (c: unknown): c is ReadonlyArray<string | number> =>
  Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === "string" || typeof x === "number")

/** Starts the gateway in front of the Redis at `redisUrl`. */
export const startRestGateway = async (redisUrl: string, token = "test-token"): Promise<RestGateway> => {
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 })
  redis.on("error", () => {})
  const requests: Array<GatewayRequest> = []
  let toDrop = 0
  let toStall = 0
  let gathering:
    | {
        readonly matches: (command: ReadonlyArray<unknown>) => boolean
        readonly n: number
        readonly waiting: Array<() => void>
      }
    | undefined
  /** Resolves when the request may run: at once, or when the gathering it belongs to is complete. */
  const gate = (commands: ReadonlyArray<unknown>): Promise<void> => {
    const g = gathering
    if (!g || !commands.some((c) => Array.isArray(c) && g.matches(c))) return Promise.resolve()
    return new Promise((resolve) => {
      g.waiting.push(resolve)
      if (g.waiting.length >= g.n) {
        gathering = undefined
        for (const release of g.waiting) release()
      }
    })
  }
  const run = async (
    command: ReadonlyArray<string | number>,
    base64: boolean
  ): Promise<{ result: unknown } | { error: string }> => {
    try {
      const [name, ...args] = command
      const reply = (await redis.callBuffer(String(name), ...args.map((a) => String(a)))) as Reply
      return { result: encode(reply, base64) }
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) }
    }
  }
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      if (toStall > 0 && status !== 401) {
        toStall--
        return
      }
      if (toDrop > 0 && status !== 401) {
        toDrop--
        req.socket.destroy()
        return
      }
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    const path = (req.url ?? "/").split("?")[0]!
    const text = await readBody(req)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    requests.push({
      path,
      commands: path === "/pipeline" && Array.isArray(body) ? body : [body as ReadonlyArray<unknown>]
    })
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: "Unauthorized" })
    if (req.method !== "POST") return send(405, { error: "only POST" })
    const base64 = req.headers["upstash-encoding"] === "base64"
    await gate(path === "/pipeline" && Array.isArray(body) ? body : [body])
    if (path === "/pipeline") {
      if (!Array.isArray(body) || !body.every(isCommand))
        return send(400, { error: "ERR the body must be an array of commands" })
      const out: Array<unknown> = []
      // In order, each command after the previous one answered (Upstash: ordered, not atomic).
      for (const c of body) out.push(await run(c, base64))
      return send(200, out)
    }
    if (path !== "/") return send(404, { error: `no such endpoint ${path}` })
    if (!isCommand(body)) return send(400, { error: "ERR the body must be a command array" })
    const answer = await run(body, base64)
    return send("error" in answer ? 400 : 200, answer)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    dropAnswers: (n) => {
      toDrop = n
    },
    stallAnswers: (n) => {
      toStall = n
    },
    gather: (matches, n) => {
      gathering = { matches, n, waiting: [] }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      redis.disconnect()
    }
  }
}
