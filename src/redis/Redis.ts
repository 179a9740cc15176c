import { Cluster, Redis as IORedis } from "ioredis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ConfigProvider from "effect/ConfigProvider"
import { RedisConnectionError, RedisError, errorMessage } from "./errors.js"
import { describeTarget, type RedisOptions } from "./options.js"
import { keySlot } from "./keySlot.js"
import { type LuaName, luaScript } from "./scripts.js"
import { preventSubscriberListenerLeak } from "./clusterSubscriberLeak.js"
import { type ConnectionState, type OutageEvents, reconnectDelayMs, reconnectMaxDelayMs, watchOutages } from "./reconnect.js"
import { RedisService } from "./RedisService.js"
import type { BatchReply, RedisTransport, ScriptArg, ScriptCall } from "./transport.js"

export type RedisClient = IORedis | Cluster
export type { BatchReply, RedisTransport, ScriptArg, ScriptCall }

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

/** ioredis sends a Buffer as raw bytes but a plain Uint8Array as the text "10,3,…": wrap it (no copy). */
const toArg = (a: ScriptArg): string | number | Buffer =>
  typeof a === "string" || typeof a === "number" || Buffer.isBuffer(a) ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength)
/** EVALSHA's arguments: sha, key count, keys, args (one array, no intermediate copies). */
const evalshaArgs = (sha: string, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>): Array<string | number | Buffer> => {
  const out: Array<string | number | Buffer> = [sha, keys.length]
  for (const k of keys) out.push(k)
  for (const a of args) out.push(toArg(a))
  return out
}

const isNoScript = (e: unknown) => errorMessage(e).startsWith("NOSCRIPT")

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
  if (o.commandTimeoutMs !== undefined) opts.commandTimeout = o.commandTimeoutMs
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
  for (const field of ["connectTimeoutMs", "commandTimeoutMs"] as const) {
    const v = o[field]
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) return `${field} must be a whole number of milliseconds ≥ 1, got ${v}`
  }
  // Without a scheme ioredis reads "host:port" or a unix socket path: no database to check there.
  if (o.url === undefined || !o.url.includes("://")) return undefined
  let u: URL
  try {
    u = new URL(o.url)
  } catch {
    return "the URL does not parse; expected redis://[user:password@]host:port[/db] or rediss://…"
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") return `the URL's scheme must be redis: or rediss:, got ${u.protocol}`
  const path = databaseInPath(u)
  if (path !== "" && !/^\d+$/.test(path)) return `the database in the URL's path must be a whole number ≥ 0, got "${decodeURIComponent(path)}"`
  return undefined
}

class DatabaseRefused extends Error {}
/** The database the options select (checked valid by then), for messages. */
const dbOf = (o: RedisOptions): string => String(o.db ?? ((o.url?.includes("://") && databaseInPath(new URL(o.url))) || "0"))

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

/** Opens a connection and waits until it answers; on failure the reconnect loop is stopped. */
const connect = (o: RedisOptions): Effect.Effect<RedisClient, RedisConnectionError> => {
  const target = describeTarget(o)
  const invalid = invalidRedisOptions(o)
  if (invalid !== undefined)
    return Effect.fail(new RedisConnectionError({ target, message: `invalid Redis address ${target}: ${invalid}` }))
  return Effect.tryPromise({
    try: async () => {
      const { url, opts } = toIORedisOptions(o)
      let c: RedisClient
      if (o.cluster) {
        c = new Cluster(o.cluster.map((n) => ({ host: n.host, port: n.port })), {
          lazyConnect: true,
          enableOfflineQueue: true,
          redisOptions: { ...credentialsFromUrl(url), ...opts } as never,
          ...reconnectOptions(o)
        })
        preventSubscriberListenerLeak(c)
      } else if (o.sentinel) {
        c = new IORedis({
          ...credentialsFromUrl(url),
          ...opts,
          sentinels: o.sentinel.sentinels.map((n) => ({ host: n.host, port: n.port })),
          name: o.sentinel.name,
          ...reconnectOptions(o)
        } as never)
      } else {
        c = url ? new IORedis(url, opts as never) : new IORedis({ host: "127.0.0.1", port: 6379, ...opts } as never)
      }
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
          c.connect().then(() => (c instanceof Cluster ? c.ping() : undefined)),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout)
          })
        ])
        if (selectError !== undefined) throw selectError
      } catch (e) {
        c.disconnect()
        if (selectError !== undefined) throw new DatabaseRefused(`the server refused database ${dbOf(o)} (${errorMessage(selectError)})`)
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

/** Opens a scoped connection: it is closed when the scope closes. */
export const acquireClient = (o: RedisOptions): Effect.Effect<RedisClient, RedisConnectionError, Scope.Scope> =>
  Effect.acquireRelease(connect(o), close)

/** A cluster node's address as `Cluster.slots` names it. */
const nodeAddress = (n: IORedis): string => `${n.options.host}:${n.options.port}`

/**
 * The masters serving these calls' slots: a script load for them never waits on a master they do
 * not use (one that hangs during a failover would stall every queue). All masters when a call has
 * no key or a slot's owner is not known yet.
 */
const mastersFor = (c: Cluster, calls: ReadonlyArray<ScriptCall>): Array<IORedis> => {
  const owners = new Set<string>()
  for (const call of calls) {
    const owner = call.keys.length === 0 ? undefined : c.slots[keySlot(call.keys[0]!)]?.[0]
    if (owner === undefined) return c.nodes("master")
    owners.add(owner)
  }
  const nodes = c.nodes("master").filter((n) => owners.has(nodeAddress(n)))
  return nodes.length === owners.size ? nodes : c.nodes("master")
}

/** Loads a script where `calls` run: the single node, or the masters of their slots on a cluster. */
const loadFor = async (c: RedisClient, source: string, calls: ReadonlyArray<ScriptCall>) => {
  if (c instanceof Cluster) await Promise.all(mastersFor(c, calls).map((n) => n.script("LOAD", source)))
  else await c.script("LOAD", source)
}

/**
 * Builds the service around an already-open client (the caller owns its lifetime). `outages` is
 * told once when the connection is lost and once when it is back (see watchOutages).
 */
export const makeRedis = (client: RedisClient, options: RedisOptions, outages?: OutageEvents): RedisShape => {
  const target = describeTarget(options)
  const watcher = watchOutages(client, outages ?? { onLost: () => {}, onRestored: () => {} })
  const use = <A>(op: string, f: (c: RedisClient) => Promise<A>) =>
    Effect.tryPromise({ try: () => f(client), catch: (cause) => new RedisError({ op, message: errorMessage(cause), cause }) })

  const isCluster = client instanceof Cluster

  // Scripts known to be cached on the server(s) of this connection. On a single node (or
  // Sentinel's master) a script's first call on a connection is sent as EVAL with its source,
  // which runs it and caches it in one round trip (a cold start pays no SCRIPT LOAD); later calls
  // are EVALSHA. On a cluster a batch first loads any script it has not seen on every master, so
  // its EVALSHAs cannot fail with NOSCRIPT half-way and run out of order. A reconnect (possibly to
  // a promoted replica) forgets the set. Only a SCRIPT FLUSH between two batches can still make a
  // batch retry its NOSCRIPT calls after the later calls ran.
  const loaded = new Set<string>()
  client.on("ready", () => loaded.clear())
  /** Whether this call goes as EVAL with the source (its script's first call on a single-node connection). */
  const sendSource = (name: LuaName) => !isCluster && !loaded.has(name)

  const run = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    use(`script ${name}`, async (c) => {
      const s = luaScript(name)
      const argv = evalshaArgs(s.sha, keys, args)
      if (sendSource(name)) {
        argv[0] = s.source
        const reply = await (buffers ? c.callBuffer("EVAL", ...argv) : c.call("EVAL", ...argv))
        loaded.add(name)
        return reply
      }
      try {
        return await (buffers ? c.callBuffer("EVALSHA", ...argv) : c.call("EVALSHA", ...argv))
      } catch (e) {
        if (!isNoScript(e)) throw e
        argv[0] = s.source
        return await (buffers ? c.callBuffer("EVAL", ...argv) : c.call("EVAL", ...argv))
      }
    })

  const single = async (c: RedisClient, call: ScriptCall, buffers: boolean): Promise<BatchReply> => {
    const s = luaScript(call.script)
    const argv = evalshaArgs(s.sha, call.keys, call.args)
    if (sendSource(call.script)) {
      argv[0] = s.source
      try {
        const value = buffers ? await c.callBuffer("EVAL", ...argv) : await c.call("EVAL", ...argv)
        loaded.add(call.script)
        return { ok: true, value }
      } catch (err) {
        return { ok: false, error: new RedisError({ op: `script ${call.script}`, message: errorMessage(err), cause: err }) }
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const value = buffers ? await c.callBuffer("EVALSHA", ...argv) : await c.call("EVALSHA", ...argv)
        return { ok: true, value }
      } catch (err) {
        if (attempt === 0 && isNoScript(err)) {
          await loadFor(c, s.source, [call])
          continue
        }
        return { ok: false, error: new RedisError({ op: `script ${call.script}`, message: errorMessage(err), cause: err }) }
      }
    }
  }

  /**
   * Loads the scripts of a batch not yet known to be cached (a failure is left to the calls
   * themselves: they answer NOSCRIPT or their own error). On a cluster, per script and master
   * (only the masters of the calls' slots are asked).
   */
  const loadMissing = async (c: RedisClient, calls: ReadonlyArray<ScriptCall>) => {
    for (const call of calls) {
      const name = call.script
      const key = c instanceof Cluster ? `${name} ${c.slots[call.keys.length === 0 ? -1 : keySlot(call.keys[0]!)]?.[0] ?? "*"}` : name
      if (loaded.has(key)) continue
      try {
        await loadFor(c, luaScript(name).source, calls.filter((x) => x.script === name))
        loaded.add(key)
      } catch {
        // e.g. one cluster node unreachable: the calls to it fail on their own (they answer
        // NOSCRIPT and are loaded again, or fail with the node's error). Loading the others would
        // only wait for the same failure again.
        return
      }
    }
  }

  /** One pipeline of calls (of one slot on a cluster), each call its own reply; NOSCRIPT calls are sent again once. */
  const pipelined = async (c: RedisClient, calls: ReadonlyArray<ScriptCall>, buffers: boolean, replies: Array<BatchReply>, at: ReadonlyArray<number> | undefined) => {
    const fail = (i: number, err: unknown) =>
      (replies[at ? at[i]! : i] = { ok: false, error: new RedisError({ op: `script ${calls[i]!.script}`, message: errorMessage(err), cause: err }) })
    // One call: a plain EVALSHA (a pipeline costs more CPU for no gain).
    if (calls.length === 1) {
      replies[at ? at[0]! : 0] = await single(c, calls[0]!, calls[0]!.buffers ?? buffers)
      return
    }
    let pending = calls.map((_, i) => i)
    for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
      const p = c.pipeline()
      // A script's first call in the pipeline goes as EVAL when the connection has not run it yet
      // (it caches it for the EVALSHAs after it: one connection runs them in order).
      const sourced = new Set<LuaName>()
      for (const i of pending) {
        const call = calls[i]!
        const s = luaScript(call.script)
        const argv = evalshaArgs(s.sha, call.keys, call.args)
        let command = "EVALSHA"
        if (attempt === 0 && sendSource(call.script) && !sourced.has(call.script)) {
          sourced.add(call.script)
          argv[0] = s.source
          command = "EVAL"
        }
        if (call.buffers ?? buffers) p.callBuffer(command, ...argv)
        else p.call(command, ...argv)
      }
      let res: Array<[Error | null, unknown]>
      try {
        res = (await p.exec()) ?? []
      } catch (err) {
        // The round trip itself failed: every call it carried fails with that error.
        for (const i of pending) fail(i, err)
        return
      }
      for (const name of sourced) loaded.add(name)
      const again: Array<number> = []
      pending.forEach((i, j) => {
        const [err, value] = res[j] ?? [new Error("no reply in the pipeline's answer"), undefined]
        if (err && isNoScript(err) && attempt === 0) again.push(i)
        else if (err) fail(i, err)
        else replies[at ? at[i]! : i] = { ok: true, value }
      })
      // A NOSCRIPT reply means that call did nothing, so only those calls are sent again.
      if (again.length > 0) {
        try {
          for (const name of new Set(again.map((i) => calls[i]!.script))) await loadFor(c, luaScript(name).source, calls)
        } catch (err) {
          for (const i of again) fail(i, err)
          return
        }
      }
      pending = again
    }
  }

  /** The calls' indexes grouped by the hash slot of their first key, in call order within a slot. */
  const bySlot = (calls: ReadonlyArray<ScriptCall>): ReadonlyArray<ReadonlyArray<number>> => {
    const groups = new Map<number, Array<number>>()
    calls.forEach((call, i) => {
      const slot = call.keys.length === 0 ? -1 : keySlot(call.keys[0]!)
      const g = groups.get(slot)
      if (g) g.push(i)
      else groups.set(slot, [i])
    })
    return [...groups.values()]
  }

  const scriptBatch = (calls: ReadonlyArray<ScriptCall>, opts?: { readonly buffers?: boolean }): Effect.Effect<ReadonlyArray<BatchReply>> =>
    calls.length === 0
      ? Effect.succeed([])
      : Effect.promise(async () => {
          const buffers = opts?.buffers === true
          const replies: Array<BatchReply> = new Array(calls.length)
          try {
            if (!isCluster) await pipelined(client, calls, buffers, replies, undefined)
            else {
              await loadMissing(client, calls)
              const groups = bySlot(calls)
              if (groups.length === 1) await pipelined(client, calls, buffers, replies, undefined)
              else await Promise.all(groups.map((idx) => pipelined(client, idx.map((i) => calls[i]!), buffers, replies, idx)))
            }
          } catch (err) {
            // Defensive: any call left without a reply gets the error.
            for (let i = 0; i < calls.length; i++)
              if (replies[i] === undefined) replies[i] = { ok: false, error: new RedisError({ op: `script ${calls[i]!.script}`, message: errorMessage(err), cause: err }) }
          }
          return replies as ReadonlyArray<BatchReply>
        })

  return {
    client,
    isCluster,
    target,
    use,
    script: (name, keys, args) => run(name, keys, args, false),
    scriptBuffer: (name, keys, args) => run(name, keys, args, true),
    scriptBatch,
    command: (op, args) => use(op, (c) => c.call(String(args[0]), ...args.slice(1))),
    connectionState: watcher.state,
    duplicate: acquireClient(options)
  }
}

/**
 * Opens the service's connection; its outages are logged with the building fiber's logger, a
 * warning when one starts and an info line when it is over (not one line per attempt).
 */
const openRedis = (options: RedisOptions): Effect.Effect<RedisShape, RedisConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* acquireClient(options)
    const log = Effect.runForkWith(yield* Effect.context<never>())
    const target = describeTarget(options)
    return makeRedis(client, options, {
      onLost: () => void log(Effect.logWarning(`Redis connection lost (${target}): reconnecting until it answers, at most ${reconnectMaxDelayMs} ms apart`)),
      onRestored: () => void log(Effect.logInfo(`Redis connection restored (${target})`))
    })
  })

/** The Redis service: one shared connection plus the script runner (the key is RedisService's, so code that needs only the key does not import ioredis). */
export class Redis extends RedisService {
  /** A Layer that connects with the given options and quits when its scope closes. */
  static readonly layer = (options: RedisOptions = {}): Layer.Layer<Redis, RedisConnectionError> => Layer.effect(Redis, openRedis(options))

  /**
   * A Layer configured from the environment: `REDIS_URL` (default redis://127.0.0.1:6379), read
   * through the current ConfigProvider (Effect's `Config` module is not needed, so a bundle that
   * does not use Config does not carry it, nor Schema).
   */
  static readonly layerConfig: Layer.Layer<Redis, RedisConnectionError | ConfigProvider.SourceError> = Layer.effect(
    Redis,
    Effect.gen(function* () {
      const provider = yield* ConfigProvider.ConfigProvider
      const node = yield* provider.load(["REDIS_URL"])
      const url = node?._tag === "Value" && node.value !== "" ? node.value : "redis://127.0.0.1:6379"
      return yield* openRedis({ url })
    })
  )
}
