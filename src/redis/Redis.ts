import type { Cluster, Redis as IORedis } from "ioredis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ConfigProvider from "effect/ConfigProvider"
import { RedisConnectionError, type RedisError, errorMessage } from "./errors.js"
import { defaultCommandTimeoutMs, describeTarget, invalidTimeouts, type RedisOptions } from "./options.js"
import { preventSubscriberListenerLeak } from "./clusterSubscriberLeak.js"
import { watchCommandDeadlines } from "./commandDeadlines.js"
import { type ConnectionState, type OutageEvents, reconnectDelayMs, reconnectMaxDelayMs } from "./reconnect.js"
import { RedisService } from "./RedisService.js"
import { type CommandClass, makeRedisService } from "./ioredisService.js"
import { bundledIoredis, type IoredisModule } from "./loadIoredis.js"
import type { BatchReply, RedisTransport, ScriptArg, ScriptCall } from "./transport.js"

export type RedisClient = IORedis | Cluster
export type { BatchReply, RedisTransport, ScriptArg, ScriptCall }

/** The `Redis` service: the ioredis client, script calls (EVALSHA with NOSCRIPT reload) and batches grouped by cluster slot. */
export interface RedisShape extends RedisTransport {
  /** The ioredis client (single node, Sentinel-managed or Cluster). */
  readonly client: RedisClient
  /** Runs any ioredis call, turning a rejection into a RedisError named `op`. */
  readonly use: <A>(op: string, f: (client: RedisClient) => Promise<A>) => Effect.Effect<A, RedisError>
  /**
   * Sends many script calls in as few round trips as the deployment allows, and gives each call its
   * own outcome (never fails as a whole). Single node or Sentinel: one pipeline (a batch of one is
   * a plain EVALSHA). Redis Cluster: the calls are grouped by the hash slot of their first key (all
   * keys of one call must share its slot), one pipeline per slot, all sent at once; a pipeline that
   * fails (e.g. its node is unreachable) fails only its own calls. Calls of one slot keep their
   * order. A script missing on the server (NOSCRIPT) is loaded and its calls sent again.
   */
  readonly scriptBatch: RedisTransport["scriptBatch"]
  /** Whether the connection is down (reconnecting) and how many outages it has had. */
  readonly connectionState: () => ConnectionState
  /** A second connection with the same settings (for blocking commands and pub/sub), closed with the scope. */
  readonly duplicate: Effect.Effect<RedisClient, RedisConnectionError, Scope.Scope>
}

// ioredis's option types do not accept exactOptionalPropertyTypes; we build plain objects.
type IORedisOptions = Record<string, unknown>

const toIORedisOptions = (o: RedisOptions): { url: string | undefined; opts: IORedisOptions } => {
  const opts: IORedisOptions = {
    lazyConnect: true,
    // A single node has no INFO ready check: the handshake (HELLO, answered by the server) already
    // proves the connection works, and a cold start saves a round trip. A server still loading its
    // dataset answers commands with a LOADING error, which fails those commands. Sentinel and
    // Cluster keep it (Sentinel's checks the node it reached is still the master).
    enableReadyCheck: o.sentinel !== undefined || o.cluster !== undefined,
    connectTimeout: o.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: o.maxRetriesPerRequest ?? 3,
    enableAutoPipelining: false
  }
  if (o.username !== undefined) opts.username = o.username
  if (o.password !== undefined) opts.password = o.password
  if (o.db !== undefined) opts.db = o.db
  if (o.tls) opts.tls = o.tls === true ? {} : o.tls
  // Every command is bounded by default; blocking reads set their own bound (pushReceiver.ts). A
  // Cluster's through ioredis's option (a timer per command); a single node's and Sentinel's
  // through one timer per connection (commandDeadlines.ts), set up in `connect`.
  if (o.cluster) opts.commandTimeout = o.commandTimeoutMs ?? defaultCommandTimeoutMs
  return { url: o.url, opts }
}

const credentialsFromUrl = (url: string | undefined): IORedisOptions => {
  if (!url) return {}
  const u = new URL(url)
  const o: IORedisOptions = {}
  if (u.username) o.username = decodeURIComponent(u.username)
  if (u.password) o.password = decodeURIComponent(u.password)
  if (u.protocol === "rediss:") o.tls = {}
  return o
}

/** The database a redis:// URL names ("" when none). */
const databaseInPath = (u: URL): string => u.pathname.replace(/^\//, "")

/**
 * Why these options cannot name a database, or undefined when they can: a URL that does not parse,
 * or a database (the URL's path or `db`) that is not a whole number ≥ 0. Checked before connecting,
 * because ioredis would send `SELECT NaN` and throw outside any promise.
 */
const invalidRedisOptions = (o: RedisOptions): string | undefined => {
  if (o.db !== undefined && !(Number.isInteger(o.db) && o.db >= 0)) return `db must be a whole number ≥ 0, got ${o.db}`
  const timeouts = invalidTimeouts(o)
  if (timeouts !== undefined) return timeouts
  // Without a scheme ioredis reads "host:port" or a unix socket path: no database to check there.
  if (o.url === undefined || !o.url.includes("://")) return undefined
  let u: URL
  try {
    u = new URL(o.url)
  } catch {
    return "the URL does not parse; expected redis://[user:password@]host:port[/db] or rediss://…"
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    return `the URL's scheme must be redis: or rediss:, got ${u.protocol}`
  const path = databaseInPath(u)
  if (path !== "" && !/^\d+$/.test(path))
    return `the database in the URL's path must be a whole number ≥ 0, got "${decodeURIComponent(path)}"`
  return undefined
}

class DatabaseRefused extends Error {}
/** The database the options select (checked valid by then), for messages. */
const dbOf = (o: RedisOptions): string =>
  String(o.db ?? ((o.url?.includes("://") && databaseInPath(new URL(o.url))) || "0"))

/**
 * How a Cluster or Sentinel connection reconnects once it is open: forever, waiting
 * `reconnectDelayMs` (100 ms doubling to 2 s, jittered) between attempts. (ioredis's Cluster
 * default gives up after a few attempts and ends the client for good.) The first connect does not
 * wait for these: it fails at its first refusal or after `connectTimeoutMs`, and stops the retries.
 * A single node keeps ioredis's own strategy (it too never gives up).
 */
export const reconnectOptions = (o: RedisOptions): IORedisOptions => {
  const retry = (times: number) => reconnectDelayMs(times)
  if (o.cluster) return { clusterRetryStrategy: retry }
  if (o.sentinel) return { retryStrategy: retry, sentinelRetryStrategy: retry }
  return {}
}

/** Opens a connection with ioredis (`io`) and waits until it answers; on failure the reconnect loop is stopped. */
const connect = (io: IoredisModule, o: RedisOptions): Effect.Effect<RedisClient, RedisConnectionError> => {
  const target = describeTarget(o)
  const invalid = invalidRedisOptions(o)
  if (invalid !== undefined)
    return Effect.fail(new RedisConnectionError({ target, message: `invalid Redis address ${target}: ${invalid}` }))
  return Effect.tryPromise({
    try: async () => {
      const { url, opts } = toIORedisOptions(o)
      let c: RedisClient
      if (o.cluster) {
        c = new io.Cluster(
          o.cluster.map((n) => ({ host: n.host, port: n.port })),
          {
            lazyConnect: true,
            enableOfflineQueue: true,
            redisOptions: { ...credentialsFromUrl(url), ...opts } as never,
            ...reconnectOptions(o)
          }
        )
        preventSubscriberListenerLeak(c)
      } else if (o.sentinel) {
        c = new io.Redis({
          ...credentialsFromUrl(url),
          ...opts,
          sentinels: o.sentinel.sentinels.map((n) => ({ host: n.host, port: n.port })),
          name: o.sentinel.name,
          ...reconnectOptions(o)
        } as never)
      } else {
        c = url ? new io.Redis(url, opts as never) : new io.Redis({ host: "127.0.0.1", port: 6379, ...opts } as never)
      }
      if (!(c instanceof io.Cluster)) watchCommandDeadlines(c, o.commandTimeoutMs ?? defaultCommandTimeoutMs)
      // Errors surface through the commands that fail; keep Node from printing them. The last one
      // seen while connecting says why (e.g. WRONGPASS), where connect() itself only says "closed".
      // ioredis selects the database once connected and reports a refused SELECT (index out of
      // range) only as an "error" event; the ping queued behind it answers after it, so it is known here.
      let lastError: unknown
      let selectError: unknown
      const onError = (e: unknown) => {
        lastError = e
        if ((e as { command?: { name?: string } } | null)?.command?.name === "select") selectError = e
      }
      c.on("error", onError)
      // One budget for the whole open: TCP (and TLS), the ready check and the PING. A server that
      // accepts the connection but never answers fails here too, not only one that refuses it.
      const timeout = o.connectTimeoutMs ?? 5000
      let timer: NodeJS.Timeout | undefined
      try {
        await Promise.race([
          // A cluster's nodes answer once it has read the slots; a single node once HELLO answered.
          c.connect().then(() => (c instanceof io.Cluster ? c.ping() : undefined)),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout)
          })
        ])
        if (selectError !== undefined) throw selectError
      } catch (e) {
        c.disconnect()
        if (selectError !== undefined)
          throw new DatabaseRefused(`the server refused database ${dbOf(o)} (${errorMessage(selectError)})`)
        throw lastError ?? e
      } finally {
        if (timer) clearTimeout(timer)
      }
      c.off("error", onError)
      c.on("error", () => {})
      return c
    },
    catch: (cause) =>
      new RedisConnectionError({
        target,
        message:
          cause instanceof DatabaseRefused
            ? `cannot use Redis at ${target}: ${cause.message}; pick a database the server has (its "databases" setting)`
            : `cannot connect to Redis at ${target}: ${errorMessage(cause).replace(/\.+$/, "")}. Is redis-server running, and are REDIS_URL and the credentials right?`,
        cause
      })
  })
}

/** Closes a connection: QUIT, then a hard disconnect if the server does not answer within 2 s. */
const close = (c: RedisClient) =>
  Effect.callback<void>((resume) => {
    if (c.status === "end") return resume(Effect.void)
    c.once("end", () => resume(Effect.void))
    c.quit().catch(() => c.disconnect())
  }).pipe(
    Effect.timeoutOption("2 seconds"),
    // Only force-close a connection that did not end: disconnect() on an ended ioredis client
    // starts a 2 s timer that would keep the process alive after close.
    Effect.ensuring(Effect.sync(() => c.status !== "end" && c.disconnect())),
    Effect.asVoid
  )

/** Opens a scoped connection with ioredis (`io`): it is closed when the scope closes. */
export const acquireClient = (
  io: IoredisModule,
  o: RedisOptions
): Effect.Effect<RedisClient, RedisConnectionError, Scope.Scope> => Effect.acquireRelease(connect(io, o), close)

/**
 * Builds the service around an already-open client (the caller owns its lifetime); `io` is the
 * ioredis module the client comes from. `outages` is told once when the connection is lost and
 * once when it is back (see watchOutages).
 */
export const makeRedis = (
  io: IoredisModule,
  client: RedisClient,
  options: RedisOptions,
  outages?: OutageEvents
): RedisShape =>
  makeRedisService(client, options, acquireClient(io, options), outages, io.Command as unknown as CommandClass)

/**
 * Opens the service's connection with ioredis (`io`); its outages are logged with the building
 * fiber's logger, a warning when one starts and an info line when it is over (not one line per
 * attempt).
 */
export const openRedis = (
  io: IoredisModule,
  options: RedisOptions
): Effect.Effect<RedisShape, RedisConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* acquireClient(io, options)
    const log = Effect.runForkWith(yield* Effect.context<never>())
    const target = describeTarget(options)
    return makeRedis(io, client, options, {
      onLost: () =>
        void log(
          Effect.logWarning(
            `Redis connection lost (${target}): reconnecting until it answers, at most ${reconnectMaxDelayMs} ms apart`
          )
        ),
      onRestored: () => void log(Effect.logInfo(`Redis connection restored (${target})`))
    })
  })

/**
 * The Redis service over ioredis: one shared connection plus the script runner (the key is
 * RedisService's, so code that needs only the key does not import ioredis). ioredis is imported
 * when a layer is built (loadIoredis.ts `bundledIoredis`: a bundle that uses these layers carries
 * it; code that imports this module without building one, e.g. the Promise client on a single
 * node, does not load it).
 */
export class Redis extends RedisService {
  /** A Layer that connects with the given options and quits when its scope closes. */
  static readonly layer = (options: RedisOptions = {}): Layer.Layer<Redis, RedisConnectionError> =>
    Layer.effect(
      Redis,
      Effect.flatMap(bundledIoredis(), (io) => openRedis(io, options))
    )

  /**
   * A Layer configured from the environment: `REDIS_URL` (default redis://127.0.0.1:6379), read
   * through the current ConfigProvider (Effect's `Config` module is not needed, so a bundle that
   * does not use Config does not carry it, nor Schema).
   */
  // Pure (no side effect at class definition), so a bundle that never uses the class drops it, and ioredis with it.
  static readonly layerConfig: Layer.Layer<Redis, RedisConnectionError | ConfigProvider.SourceError> =
    /* @__PURE__ */ Layer.effect(
      Redis,
      /* @__PURE__ */ Effect.gen(function* () {
        const provider = yield* ConfigProvider.ConfigProvider
        const node = yield* provider.load(["REDIS_URL"])
        const url = node?._tag === "Value" && node.value !== "" ? node.value : "redis://127.0.0.1:6379"
        return yield* openRedis(yield* bundledIoredis(), { url })
      })
    )
}
