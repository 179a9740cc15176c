/**
 * The Redis service over one plain TCP (or TLS) connection to a single node, speaking RESP2
 * itself: what a serverless enqueue function needs (script calls, one or pipelined, and a plain
 * command) without ioredis, whose import and command table are most of a Lambda bundle's size and
 * cold start. Cluster and Sentinel are not spoken here: they keep ioredis (Redis.ts).
 *
 * - Connect: TCP (TLS for rediss:// or `tls`), then one round trip: HELLO 2 (with AUTH when there
 *   are credentials) and SELECT when a database is named; a server without HELLO (Redis < 6) gets
 *   AUTH instead. `connectTimeoutMs` bounds it all.
 * - Scripts: a script's first call on a connection goes as EVAL with its source (which caches it),
 *   later calls as EVALSHA; a NOSCRIPT answer (SCRIPT FLUSH) sends that call again as EVAL.
 * - Timeout: a command (or a batch) without a reply after `commandTimeoutMs` fails with a RedisError
 *   "Command timed out"; its late reply, if any, is read and dropped.
 * - A dropped connection fails what was waiting with a RedisError (a lost reply: the command may
 *   have run); the next call connects again. Nothing is resent here: enqueue resends its own writes.
 */
import * as net from "node:net"
import * as tls from "node:tls"
import * as Effect from "effect/Effect"
import { RedisConnectionError, RedisError, errorMessage } from "./errors.js"
import { describeTarget, type RedisOptions } from "./options.js"
import type { RedisShape } from "./Redis.js"
import { luaScript, type LuaName } from "./scripts.js"
import { scriptCalls } from "./scriptCalls.js"
import { respFrame } from "./respFrame.js"
import type { ScriptArg } from "./transport.js"

/** An error answer from Redis (named like ioredis's, see isErrorReply). */
class ReplyError extends Error {
  override readonly name = "ReplyError"
}

/** Why these options cannot be served by the light transport (Cluster, Sentinel, a bad address), or undefined. */
export const lightRedisUnsupported = (o: RedisOptions): string | undefined => {
  if (o.cluster !== undefined) return "Redis Cluster needs ioredis: pass `redis: Redis.layer({ cluster: … })`"
  if (o.sentinel !== undefined) return "Redis Sentinel needs ioredis: pass `redis: Redis.layer({ sentinel: … })`"
  if (o.db !== undefined && !(Number.isInteger(o.db) && o.db >= 0)) return `db must be a whole number ≥ 0, got ${o.db}`
  for (const field of ["connectTimeoutMs", "commandTimeoutMs"] as const) {
    const v = o[field]
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) return `${field} must be a whole number of milliseconds ≥ 1, got ${v}`
  }
  const url = o.url ?? "redis://127.0.0.1:6379"
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return "the URL does not parse; expected redis://[user:password@]host:port[/db] or rediss://…"
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") return `the URL's scheme must be redis: or rediss:, got ${u.protocol}`
  const path = u.pathname.replace(/^\//, "")
  if (path !== "" && !/^\d+$/.test(path)) return `the database in the URL's path must be a whole number ≥ 0, got "${decodeURIComponent(path)}"`
  return undefined
}

interface Address {
  readonly host: string
  readonly port: number
  readonly tls: tls.ConnectionOptions | undefined
  readonly username: string | undefined
  readonly password: string | undefined
  readonly db: number
}

const addressOf = (o: RedisOptions): Address => {
  const u = new URL(o.url ?? "redis://127.0.0.1:6379")
  const path = u.pathname.replace(/^\//, "")
  const useTls = o.tls ? (o.tls === true ? {} : (o.tls as tls.ConnectionOptions)) : u.protocol === "rediss:" ? {} : undefined
  const host = u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1"
  return {
    host,
    port: u.port === "" ? 6379 : Number(u.port),
    tls: useTls === undefined ? undefined : { servername: net.isIP(host) ? undefined : host, ...useTls } as tls.ConnectionOptions,
    username: o.username ?? (u.username ? decodeURIComponent(u.username) : undefined),
    password: o.password ?? (u.password ? decodeURIComponent(u.password) : undefined),
    db: o.db ?? (path === "" ? 0 : Number(path))
  }
}

// ---- RESP2 ----------------------------------------------------------------------------------

const CRLF = Buffer.from("\r\n")


/** No complete value yet. */
const INCOMPLETE = Symbol("incomplete")
type Parsed = { readonly value: unknown; readonly end: number } | typeof INCOMPLETE

/** Parses one RESP value at `pos` (bulk strings as Buffers, error answers as ReplyError values). */
const parse = (b: Buffer, pos: number): Parsed => {
  if (pos >= b.length) return INCOMPLETE
  const lineEnd = b.indexOf(CRLF, pos)
  if (lineEnd < 0) return INCOMPLETE
  const type = b[pos]
  const line = b.toString("utf8", pos + 1, lineEnd)
  const next = lineEnd + 2
  switch (type) {
    case 43: // +
      return { value: line, end: next }
    case 45: // -
      return { value: new ReplyError(line), end: next }
    case 58: // :
      return { value: Number(line), end: next }
    case 36: {
      // $
      const n = Number(line)
      if (n < 0) return { value: null, end: next }
      if (next + n + 2 > b.length) return INCOMPLETE
      return { value: b.subarray(next, next + n), end: next + n + 2 }
    }
    case 42: {
      // *
      const n = Number(line)
      if (n < 0) return { value: null, end: next }
      const items: Array<unknown> = new Array(n)
      let p = next
      for (let i = 0; i < n; i++) {
        const r = parse(b, p)
        if (r === INCOMPLETE) return INCOMPLETE
        items[i] = r.value
        p = r.end
      }
      return { value: items, end: p }
    }
    default:
      throw new Error(`unexpected byte ${type} in a reply from Redis`)
  }
}

/** A reply as the caller asked for it: bulk strings as text, or as bytes (copied out of the read buffer). */
const shape = (v: unknown, buffers: boolean): unknown =>
  Buffer.isBuffer(v) ? (buffers ? Buffer.from(v) : v.toString("utf8")) : Array.isArray(v) ? v.map((x) => shape(x, buffers)) : v

// ---- one connection -------------------------------------------------------------------------

interface Waiting {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  /** Timed out: its reply, when it comes, is dropped. */
  settled: boolean
}

/** One open socket with its queue of commands waiting for replies (in order). */
class Connection {
  private readonly waiting: Array<Waiting> = []
  private pending: Buffer = Buffer.alloc(0)
  closed = false
  private closeError: Error | undefined

  constructor(readonly socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => this.read(chunk))
    socket.on("error", (e) => (this.closeError ??= e))
    socket.on("close", () => this.fail(this.closeError ? new Error(`connection lost: ${errorMessage(this.closeError)}`) : new Error("Connection is closed.")))
  }

  private read(chunk: Buffer) {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    let pos = 0
    for (;;) {
      let r: Parsed
      try {
        r = parse(this.pending, pos)
      } catch (e) {
        this.closeError = e as Error
        this.socket.destroy()
        return
      }
      if (r === INCOMPLETE) break
      pos = r.end
      const w = this.waiting.shift()
      if (w && !w.settled) {
        w.settled = true
        w.resolve(r.value)
      }
    }
    this.pending = pos === this.pending.length ? Buffer.alloc(0) : this.pending.subarray(pos)
  }

  private fail(e: Error) {
    this.closed = true
    for (const w of this.waiting.splice(0)) if (!w.settled) ((w.settled = true), w.reject(e))
  }

  /** Sends the commands in one write; one promise per command (its raw reply, error answers as ReplyError values). */
  send(commands: ReadonlyArray<ReadonlyArray<ScriptArg>>, timeoutMs: number | undefined): Array<Promise<unknown>> {
    if (this.closed) return commands.map(() => Promise.reject(new Error("Connection is closed.")))
    const out: Array<Buffer> = []
    const entries: Array<Waiting> = []
    const promises = commands.map((c) => {
      out.push(respFrame([], [], c))
      return new Promise<unknown>((resolve, reject) => {
        const w: Waiting = { resolve, reject, settled: false }
        entries.push(w)
        this.waiting.push(w)
      })
    })
    this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out))
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => {
        for (const w of entries) if (!w.settled) ((w.settled = true), w.reject(new Error("Command timed out")))
      }, timeoutMs)
      void Promise.allSettled(promises).then(() => clearTimeout(timer))
    }
    return promises
  }

  quit(): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.socket.destroy(), 2000)
      this.socket.once("close", () => (clearTimeout(timer), resolve()))
      void Promise.all(this.send([["QUIT"]], undefined)).catch(() => undefined).finally(() => this.socket.end())
    })
  }
}

/** Opens a connection and runs the handshake; rejects with the reason (connect error, AUTH refused, no answer). */
const open = async (a: Address, connectTimeoutMs: number): Promise<Connection> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let socket: net.Socket | undefined
  const opening = (async () => {
    socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = a.tls ? tls.connect({ host: a.host, port: a.port, ...a.tls }, () => resolve(s)) : net.connect({ host: a.host, port: a.port }, () => resolve(s))
      s.once("error", reject)
    })
    socket.setNoDelay(true)
    socket.setKeepAlive(true)
    const conn = new Connection(socket)
    const hello: Array<ScriptArg> = ["HELLO", "2"]
    if (a.password !== undefined) hello.push("AUTH", a.username ?? "default", a.password)
    const commands: Array<ReadonlyArray<ScriptArg>> = [hello]
    if (a.db !== 0) commands.push(["SELECT", a.db])
    let replies = await Promise.all(conn.send(commands, undefined))
    if (replies[0] instanceof ReplyError) {
      // Redis < 6 has no HELLO: AUTH, then SELECT again (it was refused before AUTH).
      if (!/unknown command/i.test(replies[0].message)) throw replies[0]
      const legacy: Array<ReadonlyArray<ScriptArg>> = [a.password === undefined ? ["PING"] : a.username !== undefined ? ["AUTH", a.username, a.password] : ["AUTH", a.password]]
      if (a.db !== 0) legacy.push(["SELECT", a.db])
      replies = await Promise.all(conn.send(legacy, undefined))
      if (replies[0] instanceof ReplyError) throw replies[0]
    }
    if (replies[1] instanceof ReplyError) throw new Error(`the server refused database ${a.db} (${replies[1].message}); pick a database the server has (its "databases" setting)`)
    return conn
  })()
  try {
    return await Promise.race([
      opening,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeoutMs} ms`)), connectTimeoutMs)
      })
    ])
  } catch (e) {
    socket?.destroy()
    opening.catch(() => undefined)
    throw e
  } finally {
    clearTimeout(timer)
  }
}

// ---- the service ----------------------------------------------------------------------------

const notLight = (what: string) => `${what} needs ioredis (Redis.layer): the light transport carries script calls and plain commands only`

/** The light service's extra: its socket, to stop holding the event loop while idle (serverless). */
export interface LightRedisShape extends RedisShape {
  /** `true`: the socket holds the Node.js event loop (in use); `false`: it does not (idle). A socket opened later follows the last setting. */
  readonly holdSocket: (held: boolean) => void
  /** Closes the connection (QUIT). */
  readonly quit: () => Promise<void>
}

/**
 * Connects (failing with RedisConnectionError when the server cannot be reached or refuses the
 * credentials or database) and returns the service; a later dropped connection is opened again by
 * the next call.
 */
export const connectLightRedis = (options: RedisOptions): Effect.Effect<LightRedisShape, RedisConnectionError> => {
  const target = describeTarget(options)
  const unsupported = lightRedisUnsupported(options)
  if (unsupported !== undefined) return Effect.fail(new RedisConnectionError({ target, message: `invalid Redis address ${target}: ${unsupported}` }))
  const address = addressOf(options)
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000
  const commandTimeoutMs = options.commandTimeoutMs
  const connectionError = (cause: unknown) =>
    new RedisConnectionError({
      target,
      message: `cannot connect to Redis at ${target}: ${errorMessage(cause).replace(/\.+$/, "")}. Is redis-server running, and are REDIS_URL and the credentials right?`,
      cause
    })
  return Effect.tryPromise({ try: () => open(address, connectTimeoutMs), catch: connectionError }).pipe(
    Effect.map((first) => {
      let conn: Connection | undefined = first
      let connecting: Promise<Connection> | undefined
      let held = true
      let outages = 0
      // Scripts this connection has run (so the server has them cached): EVALSHA for those.
      const loaded = new Set<LuaName>()

      const current = (): Promise<Connection> => {
        if (conn !== undefined && !conn.closed) return Promise.resolve(conn)
        if (conn !== undefined) ((conn = undefined), outages++, loaded.clear())
        connecting ??= open(address, connectTimeoutMs).then(
          (c) => {
            conn = c
            connecting = undefined
            if (!held) c.socket.unref()
            return c
          },
          (e: unknown) => {
            connecting = undefined
            throw e
          }
        )
        return connecting
      }

      /** Sends the commands in one round trip; rejects only when the round trip itself failed. */
      const roundTrip = async (commands: ReadonlyArray<ReadonlyArray<ScriptArg>>): Promise<Array<unknown>> => {
        const c = await current()
        return Promise.all(c.send(commands, commandTimeoutMs))
      }

      const scripts = scriptCalls({
        loaded,
        command: (call, withSource) => {
          const s = luaScript(call.script)
          const out: Array<ScriptArg> = withSource ? ["EVAL", s.source, call.keys.length] : ["EVALSHA", s.sha, call.keys.length]
          for (const k of call.keys) out.push(k)
          for (const a of call.args) out.push(a)
          return out
        },
        roundTrip: async (commands) => (await roundTrip(commands)).map((a) => (a instanceof ReplyError ? { ok: false, error: a } : { ok: true, value: a })),
        decode: shape
      })

      const command = (op: string, args: ReadonlyArray<string | number>) =>
        Effect.tryPromise({
          try: async () => {
            const [reply] = await roundTrip([args])
            if (reply instanceof ReplyError) throw reply
            return shape(reply, false)
          },
          catch: (cause) => new RedisError({ op, message: errorMessage(cause), cause })
        })

      const shapeOf: Omit<LightRedisShape, "client"> = {
        isCluster: false,
        target,
        ...scripts,
        command,
        use: (op) => Effect.fail(new RedisError({ op, message: notLight(op) })),
        connectionState: () => ({ down: conn === undefined || conn.closed, outages }),
        duplicate: Effect.fail(new RedisConnectionError({ target, message: notLight("a second connection (blocking commands, pub/sub)") })),
        holdSocket: (h) => {
          held = h
          if (conn !== undefined && !conn.closed) h ? conn.socket.ref() : conn.socket.unref()
        },
        quit: async () => {
          const c = conn ?? (await connecting?.catch(() => undefined))
          conn = undefined
          if (c) await c.quit()
        }
      }
      return Object.defineProperty(shapeOf, "client", {
        get: () => {
          throw new Error(notLight("the ioredis client"))
        }
      }) as LightRedisShape
    })
  )
}
