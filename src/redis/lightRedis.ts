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
 * - Timeout: a command (or a batch) without a reply after `commandTimeoutMs` (default 5000 ms)
 *   fails with a RedisError whose cause is a CommandTimeout; its late reply, if any, is read and dropped.
 * - LOADING (the server is still loading its dataset): the call is sent again after a short backoff
 *   for up to `loadingTimeoutMs` (loading.ts).
 * - A dropped connection fails what was waiting with a RedisError (a lost reply: the command may
 *   have run); the next call connects again. Nothing is resent here: enqueue resends its own writes.
 */
import * as net from "node:net"
import * as tls from "node:tls"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CommandTimeout, RedisConnectionError, RedisError, errorMessage, redisError } from "./errors.js"
import {
  defaultCommandTimeoutMs,
  defaultLoadingTimeoutMs,
  describeTarget,
  invalidTimeouts,
  type RedisOptions
} from "./options.js"
import { isLoadingReply, type LoadingWait, loadingWaiter, whileLoading } from "./loading.js"
import type { Redis, RedisShape } from "./Redis.js"
import { RedisService } from "./RedisService.js"
import { restoreFastStringPrototype } from "./fastStringPrototype.js"
import { luaScript, type LuaName } from "./scripts.js"
import { scriptCalls, scriptError } from "./scriptCalls.js"
import { evalshaFrames, respFrame } from "./respFrame.js"
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
  const timeouts = invalidTimeouts(o)
  if (timeouts !== undefined) return timeouts
  const url = o.url ?? "redis://127.0.0.1:6379"
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return "the URL does not parse; expected redis://[user:password@]host:port[/db] or rediss://…"
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    return `the URL's scheme must be redis: or rediss:, got ${u.protocol}`
  const path = u.pathname.replace(/^\//, "")
  if (path !== "" && !/^\d+$/.test(path))
    return `the database in the URL's path must be a whole number ≥ 0, got "${decodeURIComponent(path)}"`
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
  const useTls = o.tls
    ? o.tls === true
      ? {}
      : (o.tls as tls.ConnectionOptions)
    : u.protocol === "rediss:"
      ? {}
      : undefined
  const host = u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1"
  return {
    host,
    port: u.port === "" ? 6379 : Number(u.port),
    tls:
      useTls === undefined
        ? undefined
        : ({ servername: net.isIP(host) ? undefined : host, ...useTls } as tls.ConnectionOptions),
    username: o.username ?? (u.username ? decodeURIComponent(u.username) : undefined),
    password: o.password ?? (u.password ? decodeURIComponent(u.password) : undefined),
    db: o.db ?? (path === "" ? 0 : Number(path))
  }
}

// ---- RESP2 ----------------------------------------------------------------------------------

/** No complete value yet. */
const INCOMPLETE = Symbol("incomplete")

/** Where the value `parse` returned ends (the offset after it): set by each call that returns a value. */
let parsedEnd = 0

/** The offset of the `\r` ending the line that starts at `pos`, or -1 when the line is not complete. */
const lineEndAt = (b: Buffer, pos: number): number => {
  for (let i = pos; i < b.length - 1; i++) if (b[i] === 13 && b[i + 1] === 10) return i
  return -1
}

/** The integer written in bytes `from`..`to` (a length or an integer reply: an optional `-`, then digits). */
const integerAt = (b: Buffer, from: number, to: number): number => {
  const negative = b[from] === 45
  let n = 0
  for (let i = negative ? from + 1 : from; i < to; i++) {
    const d = b[i]! - 48
    if (d < 0 || d > 9) return Number(b.toString("latin1", from, to)) // not a plain integer (an `:` reply never is): as JavaScript reads it
    n = n * 10 + d
  }
  return negative ? -n : n
}

/**
 * Parses one RESP value at `pos` (bulk strings as Buffers over `b`, error answers as ReplyError
 * values) and sets `parsedEnd`; INCOMPLETE when `b` does not hold all of it yet.
 */
const parse = (b: Buffer, pos: number): unknown => {
  if (pos >= b.length) return INCOMPLETE
  const lineEnd = lineEndAt(b, pos + 1)
  if (lineEnd < 0) return INCOMPLETE
  const next = lineEnd + 2
  switch (b[pos]) {
    case 43: // +
      parsedEnd = next
      return b.toString("utf8", pos + 1, lineEnd)
    case 45: // -
      parsedEnd = next
      return new ReplyError(b.toString("utf8", pos + 1, lineEnd))
    case 58: // :
      parsedEnd = next
      return integerAt(b, pos + 1, lineEnd)
    case 36: {
      // $
      const n = integerAt(b, pos + 1, lineEnd)
      if (n < 0) {
        parsedEnd = next
        return null
      }
      if (next + n + 2 > b.length) return INCOMPLETE
      parsedEnd = next + n + 2
      return b.subarray(next, next + n)
    }
    case 42: {
      // *
      const n = integerAt(b, pos + 1, lineEnd)
      if (n < 0) {
        parsedEnd = next
        return null
      }
      const items: Array<unknown> = new Array(n)
      let p = next
      for (let i = 0; i < n; i++) {
        const v = parse(b, p)
        if (v === INCOMPLETE) return INCOMPLETE
        items[i] = v
        p = parsedEnd
      }
      parsedEnd = p
      return items
    }
    default:
      throw new Error(`unexpected byte ${b[pos]} in a reply from Redis`)
  }
}

/** A reply as the caller asked for it: bulk strings as text, or as bytes (copied out of the read buffer). */
const shape = (v: unknown, buffers: boolean): unknown =>
  Buffer.isBuffer(v)
    ? buffers
      ? Buffer.from(v)
      : v.toString("utf8")
    : Array.isArray(v)
      ? v.map((x) => shape(x, buffers))
      : v

// ---- one connection -------------------------------------------------------------------------

interface Waiting {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  /** When it times out (ms since the epoch), or Infinity. */
  readonly deadline: number
  /** Its time limit (for the timeout's message). */
  readonly timeoutMs: number | undefined
  /** Answered, failed or timed out: its reply, when it comes, is dropped. */
  settled: boolean
}

const noBytes = Buffer.alloc(0)

/**
 * Frames up to this size are written into the connection's reused frame buffer (Connection
 * `frameBytes`); a longer one gets bytes of its own.
 */
const maxReusedFrame = 256 * 1024

/**
 * One open socket with its queue of commands waiting for replies (in order). Commands sent with a
 * timeout share one timer per connection, set for the oldest one waiting (and not holding the Node
 * event loop open by itself): an awaited command costs no timer of its own.
 */
class Connection {
  private readonly waiting: Array<Waiting> = []
  private pending: Buffer = noBytes
  private timer: ReturnType<typeof setTimeout> | undefined
  closed = false
  private closeError: Error | undefined
  /**
   * The buffer the next single call's frame is written into (`frameBytes`), reused while each
   * frame written from it went to the kernel at once; forgotten when the socket kept one (a write
   * it queued), which then keeps it until written. Not with TLS.
   */
  private frames: Buffer | undefined
  private readonly tls: boolean

  constructor(
    readonly socket: net.Socket,
    /** The server, secrets removed (for a timeout's message). */
    private readonly target: string
  ) {
    this.tls = socket instanceof tls.TLSSocket
    socket.on("data", (chunk: Buffer) => this.read(chunk))
    socket.on("error", (e) => (this.closeError ??= e))
    socket.on("close", () =>
      this.fail(
        this.closeError
          ? new Error(`connection lost: ${errorMessage(this.closeError)}`)
          : new Error("Connection is closed.")
      )
    )
  }

  private read(chunk: Buffer) {
    const b = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    let pos = 0
    for (;;) {
      let v: unknown
      try {
        v = parse(b, pos)
      } catch (e) {
        this.closeError = e as Error
        this.socket.destroy()
        return
      }
      if (v === INCOMPLETE) break
      pos = parsedEnd
      const w = this.waiting.shift()
      if (w !== undefined && !w.settled) {
        w.settled = true
        w.resolve(v)
      }
    }
    this.pending = pos === b.length ? noBytes : b.subarray(pos)
  }

  private fail(e: Error) {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    for (const w of this.waiting.splice(0)) if (!w.settled) (w.settled = true), w.reject(e)
  }

  /** Fails the commands whose time is up; sets the timer again for the oldest one still waiting. */
  private expire = () => {
    this.timer = undefined
    const now = Date.now()
    for (const w of this.waiting) {
      if (w.settled) continue
      if (w.deadline > now) {
        if (w.deadline !== Infinity) this.arm(w.deadline - now)
        return
      }
      w.settled = true
      w.reject(new CommandTimeout(this.target, w.timeoutMs ?? 0))
    }
  }

  private arm(ms: number) {
    this.timer = setTimeout(this.expire, ms)
    this.timer.unref()
  }

  private enqueue(timeoutMs: number | undefined): Promise<unknown> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs
    if (timeoutMs !== undefined && this.timer === undefined) this.arm(timeoutMs)
    return new Promise<unknown>((resolve, reject) => {
      this.waiting.push({ resolve, reject, deadline, timeoutMs, settled: false })
    })
  }

  /**
   * `size` bytes for the next frame sent with `sendFrame` (respFrame.ts FrameBytes): a view into
   * the connection's reused frame buffer (no allocation per call, nothing for the GC), or bytes of
   * their own for a long frame or a TLS socket.
   */
  readonly frameBytes = (size: number): Buffer => {
    if (size > maxReusedFrame || this.tls) return Buffer.allocUnsafe(size)
    let b = this.frames
    if (b === undefined || b.length < size) {
      b = Buffer.allocUnsafeSlow(Math.min(maxReusedFrame, Math.max(size * 2, 16 * 1024)))
      this.frames = b
    }
    return b.subarray(0, size)
  }

  /** Sends one command's RESP bytes; its raw reply (an error answer as a ReplyError value). */
  sendFrame(frame: Buffer, timeoutMs: number | undefined): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("Connection is closed."))
    const reply = this.enqueue(timeoutMs)
    this.socket.write(frame)
    // Not all written to the kernel at once: the socket holds the frame until it is, so the frame
    // buffer it is a view of (if it is) must not be written into again.
    if (this.socket.writableLength !== 0 && this.frames !== undefined && frame.buffer === this.frames.buffer)
      this.frames = undefined
    return reply
  }

  /** Sends the commands in one write; one promise per command (its raw reply, error answers as ReplyError values). */
  send(commands: ReadonlyArray<ReadonlyArray<ScriptArg>>, timeoutMs: number | undefined): Array<Promise<unknown>> {
    if (this.closed) return commands.map(() => Promise.reject(new Error("Connection is closed.")))
    const out = commands.map((c) => respFrame([], [], c))
    const replies = commands.map(() => this.enqueue(timeoutMs))
    this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out))
    return replies
  }

  quit(): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.socket.destroy(), 2000)
      this.socket.once("close", () => (clearTimeout(timer), resolve()))
      void Promise.all(this.send([["QUIT"]], undefined))
        .catch(() => undefined)
        .finally(() => this.socket.end())
    })
  }
}

/** Opens a connection and runs the handshake; rejects with the reason (connect error, AUTH refused, no answer). */
const open = async (a: Address, target: string, connectTimeoutMs: number): Promise<Connection> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let socket: net.Socket | undefined
  const opening = (async () => {
    socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = a.tls
        ? tls.connect({ host: a.host, port: a.port, ...a.tls }, () => resolve(s))
        : net.connect({ host: a.host, port: a.port }, () => resolve(s))
      s.once("error", reject)
    })
    socket.setNoDelay(true)
    socket.setKeepAlive(true)
    const conn = new Connection(socket, target)
    const hello: Array<ScriptArg> = ["HELLO", "2"]
    if (a.password !== undefined) hello.push("AUTH", a.username ?? "default", a.password)
    const commands: Array<ReadonlyArray<ScriptArg>> = [hello]
    if (a.db !== 0) commands.push(["SELECT", a.db])
    let replies = await Promise.all(conn.send(commands, undefined))
    if (replies[0] instanceof ReplyError) {
      // Redis < 6 has no HELLO: AUTH, then SELECT again (it was refused before AUTH).
      if (!/unknown command/i.test(replies[0].message)) throw replies[0]
      const legacy: Array<ReadonlyArray<ScriptArg>> = [
        a.password === undefined
          ? ["PING"]
          : a.username !== undefined
            ? ["AUTH", a.username, a.password]
            : ["AUTH", a.password]
      ]
      if (a.db !== 0) legacy.push(["SELECT", a.db])
      replies = await Promise.all(conn.send(legacy, undefined))
      if (replies[0] instanceof ReplyError) throw replies[0]
    }
    if (replies[1] instanceof ReplyError)
      throw new Error(
        `the server refused database ${a.db} (${replies[1].message}); pick a database the server has (its "databases" setting)`
      )
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

const notLight = (what: string) =>
  `${what} needs ioredis (Redis.layer): the light transport carries script calls and plain commands only`

/** The light service's extra: its socket, to stop holding the event loop while idle (serverless). */
export interface LightRedisShape extends RedisShape {
  /** `true`: the socket holds the Node.js event loop (in use); `false`: it does not (idle). A socket opened later follows the last setting. */
  readonly holdSocket: (held: boolean) => void
  /** Closes the connection (QUIT). */
  readonly quit: () => Promise<void>
}

/**
 * The service's one connection, opened again by the next call once it dropped (the scripts it had
 * cached are then forgotten, and the outage counted); and whether its socket holds the event loop.
 */
class Link {
  conn: Connection | undefined
  connecting: Promise<Connection> | undefined
  held = true
  outages = 0
  /** Scripts this connection has run (so the server has them cached): EVALSHA for those. */
  readonly loaded = new Set<LuaName>()
  constructor(
    first: Connection,
    readonly address: Address,
    readonly target: string,
    readonly connectTimeoutMs: number,
    readonly commandTimeoutMs: number
  ) {
    this.conn = first
  }

  /** The open connection, or one being opened. */
  current(): Promise<Connection> {
    const conn = this.conn
    if (conn !== undefined && !conn.closed) return Promise.resolve(conn)
    if (conn !== undefined) {
      this.conn = undefined
      this.outages++
      this.loaded.clear()
    }
    this.connecting ??= open(this.address, this.target, this.connectTimeoutMs).then(
      (c) => {
        this.conn = c
        this.connecting = undefined
        if (!this.held) c.socket.unref()
        return c
      },
      (e: unknown) => {
        this.connecting = undefined
        throw new Error(`cannot connect to Redis at ${this.target} again: ${errorMessage(e).replace(/\.+$/, "")}`)
      }
    )
    return this.connecting
  }

  /** Sends the commands in one round trip; rejects only when the round trip itself failed. */
  async roundTrip(commands: ReadonlyArray<ReadonlyArray<ScriptArg>>): Promise<Array<unknown>> {
    const c = await this.current()
    return Promise.all(c.send(commands, this.commandTimeoutMs))
  }

  holdSocket(h: boolean) {
    this.held = h
    const conn = this.conn
    if (conn !== undefined && !conn.closed) h ? conn.socket.ref() : conn.socket.unref()
  }

  async quit() {
    const c = this.conn ?? (await this.connecting?.catch(() => undefined))
    this.conn = undefined
    if (c) await c.quit()
  }
}

/** The script calls of the general way (scriptCalls.ts) over the link: EVAL or EVALSHA, NOSCRIPT and LOADING handled, batches. */
const generalScripts = (link: Link, loadingWait: () => LoadingWait) =>
  scriptCalls({
    loaded: link.loaded,
    command: (call, withSource) => {
      const s = luaScript(call.script)
      const out: Array<ScriptArg> = withSource
        ? ["EVAL", s.source, call.keys.length]
        : ["EVALSHA", s.sha, call.keys.length]
      for (const k of call.keys) out.push(k)
      for (const a of call.args) out.push(a)
      return out
    },
    roundTrip: async (commands) =>
      (await link.roundTrip(commands)).map((a) =>
        a instanceof ReplyError ? { ok: false, error: a } : { ok: true, value: a }
      ),
    decode: shape,
    loadingWait
  })

/**
 * A single script call. To a script this connection has run: one EVALSHA, framed in one Buffer
 * (with the bytes of a reused key list built once), no batch bookkeeping. Anything else (the first
 * call, a NOSCRIPT answer, no connection yet) goes the general way (scriptCalls). Every single
 * call goes through here, the Effect ones (`script`, `scriptBuffer`) too; batches do not.
 */
const framedScripts = (link: Link, scripts: ReturnType<typeof scriptCalls>) => {
  const frames = evalshaFrames()
  return (
    name: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>,
    buffers: boolean
  ): Promise<unknown> => {
    const c = link.conn
    if (c === undefined || c.closed || !link.loaded.has(name)) return scripts.scriptPromise(name, keys, args, buffers)
    let frame: Buffer
    try {
      frame = frames(luaScript(name).sha, String(keys.length), keys, args, c.frameBytes)
    } catch (e) {
      return Promise.reject(scriptError(name, e))
    }
    return c.sendFrame(frame, link.commandTimeoutMs).then(
      (reply) => {
        if (!(reply instanceof ReplyError)) return shape(reply, buffers)
        // LOADING: nothing ran; the general way waits it out.
        if (isLoadingReply(reply)) return scripts.scriptPromise(name, keys, args, buffers)
        if (!reply.message.startsWith("NOSCRIPT")) throw scriptError(name, reply)
        link.loaded.delete(name)
        return scripts.scriptPromise(name, keys, args, buffers)
      },
      (e: unknown) => {
        throw scriptError(name, e)
      }
    )
  }
}

/** The service over a connected link. */
const lightService = (link: Link, loadingWait: () => LoadingWait): LightRedisShape => {
  const scripts = generalScripts(link, loadingWait)
  const scriptPromise = framedScripts(link, scripts)
  /** `scriptPromise` as an Effect (it rejects with a RedisError only). */
  const runScript = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    Effect.tryPromise({ try: () => scriptPromise(name, keys, args, buffers), catch: (e) => e as RedisError })
  const command = (op: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: () =>
        whileLoading(async () => {
          const [reply] = await link.roundTrip([args])
          if (reply instanceof ReplyError) throw reply
          return shape(reply, false)
        }, loadingWait),
      catch: (cause) => redisError(op, cause)
    })
  const shapeOf: Omit<LightRedisShape, "client"> = {
    isCluster: false,
    target: link.target,
    scriptBatch: scripts.scriptBatch,
    script: (name, keys, args) => runScript(name, keys, args, false),
    scriptBuffer: (name, keys, args) => runScript(name, keys, args, true),
    scriptPromise,
    command,
    use: (op) => Effect.fail(new RedisError({ op, message: notLight(op) })),
    connectionState: () => ({ down: link.conn === undefined || link.conn.closed, outages: link.outages }),
    duplicate: Effect.fail(
      new RedisConnectionError({
        target: link.target,
        message: notLight("a second connection (blocking commands, pub/sub)")
      })
    ),
    holdSocket: (h) => link.holdSocket(h),
    quit: () => link.quit()
  }
  return Object.defineProperty(shapeOf, "client", {
    get: () => {
      throw new Error(notLight("the ioredis client"))
    }
  }) as LightRedisShape
}

/**
 * Connects (failing with RedisConnectionError when the server cannot be reached or refuses the
 * credentials or database) and returns the service; a later dropped connection is opened again by
 * the next call.
 */
export const connectLightRedis = (options: RedisOptions): Effect.Effect<LightRedisShape, RedisConnectionError> => {
  const target = describeTarget(options)
  const unsupported = lightRedisUnsupported(options)
  if (unsupported !== undefined)
    return Effect.fail(new RedisConnectionError({ target, message: `invalid Redis address ${target}: ${unsupported}` }))
  const address = addressOf(options)
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000
  const commandTimeoutMs = options.commandTimeoutMs ?? defaultCommandTimeoutMs
  const loadingWait = loadingWaiter(target, options.loadingTimeoutMs ?? defaultLoadingTimeoutMs)
  const connectionError = (cause: unknown) =>
    new RedisConnectionError({
      target,
      message: `cannot connect to Redis at ${target}: ${errorMessage(cause).replace(/\.+$/, "")}. Is redis-server running, and are REDIS_URL and the credentials right?`,
      cause
    })
  return Effect.tryPromise({ try: () => open(address, target, connectTimeoutMs), catch: connectionError }).pipe(
    Effect.map((first) => {
      // ioredis may be loaded in this process all the same (the application's, or Cluster support
      // imported beside this): undo what that did to String.prototype (fastStringPrototype.ts).
      restoreFastStringPrototype()
      return lightService(new Link(first, address, target, connectTimeoutMs, commandTimeoutMs), loadingWait)
    })
  )
}

/** The Redis service over the light transport, connected when the layer is built and closed (QUIT) with its scope. */
export const lightRedisLayer = (options: RedisOptions): Layer.Layer<Redis, RedisConnectionError> =>
  Layer.effect(
    RedisService,
    Effect.acquireRelease(connectLightRedis(options), (r) => Effect.promise(() => r.quit()))
  ) as Layer.Layer<Redis, RedisConnectionError>
