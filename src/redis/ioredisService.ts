/**
 * The Redis service around an open ioredis client (single node, Sentinel-managed or Cluster): the
 * script runner and the plain command. ioredis is imported for its types only, so code that wraps
 * a client the application opened (the serverless handlers' `redis: client`) does not carry
 * ioredis itself; connecting lives in Redis.ts.
 */
import type { Cluster, Redis as IORedis } from "ioredis"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RedisConnectionError } from "./errors.js"
import { CommandTimeout, RedisError, errorMessage, redisError } from "./errors.js"
import { isLoadingReply, type LoadingWait, loadingWaiter, whileLoading } from "./loading.js"
import { defaultCommandTimeoutMs, defaultLoadingTimeoutMs, describeTarget, type RedisOptions } from "./options.js"
import { restoreFastStringPrototype } from "./fastStringPrototype.js"
import { keySlot } from "./keySlot.js"
import { evalshaFrames } from "./respFrame.js"
import { type LuaName, luaScript } from "./scripts.js"
import { type OutageEvents, watchOutages } from "./reconnect.js"
import type { RedisClient, RedisShape } from "./Redis.js"
import type { BatchReply, ScriptArg, ScriptBatchOptions, ScriptCall } from "./transport.js"

/** Whether the client is a Redis Cluster (read from the client: no ioredis class is imported). */
export const isClusterClient = (c: RedisClient): c is Cluster => c.isCluster === true

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

/** The part of ioredis's Command class the framed EVALSHA uses (given by Redis.ts, so ioredis is not imported here). */
interface CommandLike {
  readonly promise: Promise<unknown>
  toWritable(socket: object): string | Buffer
}
export type CommandClass = new (name: string, args: Array<string>, options: { replyEncoding: string | null; errorStack?: Error | undefined }) => CommandLike

/**
 * A single node's (or Sentinel master's) EVALSHA sent as RESP bytes built in one Buffer
 * (respFrame.ts) instead of ioredis assembling them argument by argument: an ioredis Command whose
 * writable form is that Buffer, sent with `sendCommand`, so ioredis still queues it, reads its
 * reply, times it out, and writes the same bytes again if it resends it after a reconnect. Its
 * `args` are the SHA, the key count and the keys (what ioredis's tracing reports). Undefined when
 * the client does not allow it: a Cluster (ioredis routes by the keys it parses), a client with a
 * `keyPrefix` (ioredis would prefix the keys), or no Command class given.
 */
const framedEvalsha = (client: RedisClient, Base: CommandClass | undefined): ((sha: string, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) => Promise<unknown>) | undefined => {
  if (isClusterClient(client)) return undefined
  const options = client.options as { readonly keyPrefix?: string; readonly showFriendlyErrorStack?: boolean }
  if (typeof Base !== "function" || options.keyPrefix) return undefined
  // An instance of ioredis's own class with `toWritable` set on it: an instance of a subclass costs
  // several µs more per command (measured), for no difference on the wire.
  const errorStack = options.showFriendlyErrorStack === true
  const frameOf = evalshaFrames()
  return (sha, keys, args, buffers) => {
    const count = String(keys.length)
    const shown = [sha, count]
    for (const k of keys) shown.push(k)
    const frame = frameOf(sha, count, keys, args)
    // Constructed without arguments: ioredis copies them with Array.prototype.flat, about 3 µs for
    // four strings (measured); `args` is then set to the same list it would have held.
    const command = new Base("evalsha", noArgs, { replyEncoding: buffers ? null : "utf8", errorStack: errorStack ? new Error() : undefined }) as CommandLike & {
      toWritable: () => Buffer
      args: Array<string>
    }
    command.args = shown
    command.toWritable = () => frame
    return client.sendCommand(command as never) as Promise<unknown>
  }
}

const noArgs: Array<string> = []

const isNoScript = (e: unknown) => errorMessage(e).startsWith("NOSCRIPT")

/** The command timeout an ioredis client was opened with (a Cluster's is in its nodes' options), if any. */
const configuredTimeout = (c: RedisClient): number | undefined => {
  const o = (isClusterClient(c) ? c.options.redisOptions : c.options) as { readonly commandTimeout?: unknown } | undefined
  return typeof o?.commandTimeout === "number" ? o.commandTimeout : undefined
}

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
  if (isClusterClient(c)) await Promise.all(mastersFor(c, calls).map((n) => n.script("LOAD", source)))
  else await c.script("LOAD", source)
}

/**
 * Builds the service around an already-open client (the caller owns its lifetime). `outages` is
 * told once when the connection is lost and once when it is back (see watchOutages). With
 * ioredis's `Command` class, a single node's EVALSHAs go as prebuilt RESP bytes (framedEvalsha).
 */
export const makeRedisService = (
  client: RedisClient,
  options: RedisOptions,
  duplicate: Effect.Effect<RedisClient, RedisConnectionError, Scope.Scope>,
  outages?: OutageEvents,
  commandClass?: CommandClass
): RedisShape => {
  // ioredis is loaded by now (this client is one): undo what loading it did to String.prototype.
  restoreFastStringPrototype()
  const target = describeTarget(options)
  const watcher = watchOutages(client, outages ?? { onLost: () => {}, onRestored: () => {} })
  const isCluster = isClusterClient(client)
  const commandTimeoutMs = options.commandTimeoutMs ?? configuredTimeout(client) ?? defaultCommandTimeoutMs
  const loadingWait = loadingWaiter(target, options.loadingTimeoutMs ?? defaultLoadingTimeoutMs)

  /** No reply within the command timeout, saying so when the connection was not ready. */
  const timedOut = () => new CommandTimeout(target, commandTimeoutMs, "commandTimeoutMs", client.status === "ready" ? undefined : `the connection is ${client.status}`)
  /** A failure as the RedisError of `op`: ioredis's "Command timed out" becomes a CommandTimeout naming the server. */
  const failure = (op: string, cause: unknown): RedisError => redisError(op, errorMessage(cause) === "Command timed out" ? timedOut() : cause)

  /**
   * On a Cluster, `p` bounded by the command timeout: while no node is reachable ioredis's Cluster
   * holds calls in a queue of its own that no timeout covers (a node's connection times out only
   * what it was handed). Single node and Sentinel: ioredis's commandTimeout covers its queue too.
   */
  const bounded = <A>(p: Promise<A>): Promise<A> =>
    !isCluster
      ? p
      : new Promise<A>((resolve, reject) => {
          const timer = setTimeout(() => reject(timedOut()), commandTimeoutMs)
          p.then(
            (v) => (clearTimeout(timer), resolve(v)),
            (e: unknown) => (clearTimeout(timer), reject(e))
          )
        })

  const use = <A>(op: string, f: (c: RedisClient) => Promise<A>) =>
    Effect.tryPromise({ try: () => whileLoading(() => bounded(f(client)), loadingWait), catch: (cause) => failure(op, cause) })

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

  const scriptError = (name: LuaName, cause: unknown) => failure(`script ${name}`, cause)

  /** After a NOSCRIPT answer: the same call again as EVAL with the source (which caches it). */
  const evalAgain = (c: RedisClient, name: LuaName, argv: Array<string | number | Buffer>, buffers: boolean): Promise<unknown> => {
    argv[0] = luaScript(name).source
    return buffers ? c.callBuffer("EVAL", ...argv) : c.call("EVAL", ...argv)
  }

  const framed = framedEvalsha(client, commandClass)

  /** One EVALSHA on `c`: framed (prebuilt bytes) on the service's own client when it allows it, else through ioredis's call. */
  const evalsha = (c: RedisClient, sha: string, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean): Promise<unknown> => {
    if (framed !== undefined && c === client) return framed(sha, keys, args, buffers)
    const argv = evalshaArgs(sha, keys, args)
    return buffers ? c.callBuffer("EVALSHA", ...argv) : c.call("EVALSHA", ...argv)
  }

  /**
   * One script call as a Promise that rejects with a RedisError. The usual case (the script is
   * cached on this connection) is one EVALSHA and one handler on its Promise. On a Cluster the
   * whole call is bounded by the command timeout (`bounded`).
   */
  const runPromise = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean): Promise<unknown> =>
    isCluster ? bounded(runAttempt(name, keys, args, buffers, undefined)).catch((e: unknown) => Promise.reject(e instanceof RedisError ? e : scriptError(name, e))) : runAttempt(name, keys, args, buffers, undefined)

  /** One try of a script call; a LOADING answer waits (`wait`, started at the first) and tries again. */
  const runAttempt = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean, wait: LoadingWait | undefined): Promise<unknown> => {
    const failed = (e: unknown): Promise<unknown> => {
      if (!isLoadingReply(e)) throw scriptError(name, e)
      const w = wait ?? loadingWait()
      return w(e as Error).then(
        () => runAttempt(name, keys, args, buffers, w),
        (final: unknown) => Promise.reject(scriptError(name, final))
      )
    }
    try {
      const s = luaScript(name)
      if (sendSource(name)) {
        const argv = evalshaArgs(s.source, keys, args)
        return (buffers ? client.callBuffer("EVAL", ...argv) : client.call("EVAL", ...argv)).then((r) => {
          loaded.add(name)
          return r
        }, failed)
      }
      // One handler on the EVALSHA's Promise: a NOSCRIPT answer goes again as EVAL, any other error fails.
      return evalsha(client, s.sha, keys, args, buffers).then(undefined, (e: unknown) =>
        isNoScript(e) ? evalAgain(client, name, evalshaArgs(s.sha, keys, args), buffers).catch(failed) : failed(e)
      )
    } catch (e) {
      return Promise.reject(scriptError(name, e))
    }
  }

  const run = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    Effect.tryPromise({ try: () => runPromise(name, keys, args, buffers), catch: (e) => e as RedisError })

  /** One call of a batch, alone: EVAL with the source or EVALSHA (loading the script on NOSCRIPT); LOADING is waited out. */
  const single = (c: RedisClient, call: ScriptCall, buffers: boolean): Promise<BatchReply> =>
    whileLoading(() => singleAttempt(c, call, buffers), loadingWait).then(
      (value): BatchReply => ({ ok: true, value }),
      (err: unknown): BatchReply => ({ ok: false, error: scriptError(call.script, err) })
    )

  const singleAttempt = async (c: RedisClient, call: ScriptCall, buffers: boolean): Promise<unknown> => {
    const s = luaScript(call.script)
    if (sendSource(call.script)) {
      const argv = evalshaArgs(s.source, call.keys, call.args)
      const value = buffers ? await c.callBuffer("EVAL", ...argv) : await c.call("EVAL", ...argv)
      loaded.add(call.script)
      return value
    }
    try {
      return await evalsha(c, s.sha, call.keys, call.args, buffers)
    } catch (err) {
      if (!isNoScript(err)) throw err
      await loadFor(c, s.source, [call])
      return await evalsha(c, s.sha, call.keys, call.args, buffers)
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
      const key = isClusterClient(c) ? `${name} ${c.slots[call.keys.length === 0 ? -1 : keySlot(call.keys[0]!)]?.[0] ?? "*"}` : name
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
    const fail = (i: number, err: unknown) => (replies[at ? at[i]! : i] = { ok: false, error: scriptError(calls[i]!.script, err) })
    // One call: a plain EVALSHA (a pipeline costs more CPU for no gain).
    if (calls.length === 1) {
      replies[at ? at[0]! : 0] = await single(c, calls[0]!, calls[0]!.buffers ?? buffers)
      return
    }
    let pending = calls.map((_, i) => i)
    // NOSCRIPT calls go again once (after loading the script); LOADING ones (nothing ran) while the server loads.
    let reloaded = false
    let wait: LoadingWait | undefined
    for (let attempt = 0; pending.length > 0; attempt++) {
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
      const loading: Array<number> = []
      let loadingAnswer: Error | undefined
      pending.forEach((i, j) => {
        const [err, value] = res[j] ?? [new Error("no reply in the pipeline's answer"), undefined]
        if (err && isNoScript(err) && !reloaded) again.push(i)
        else if (err && isLoadingReply(err)) (loading.push(i), (loadingAnswer = err))
        else if (err) fail(i, err)
        else replies[at ? at[i]! : i] = { ok: true, value }
      })
      if (loadingAnswer !== undefined) {
        try {
          await (wait ??= loadingWait())(loadingAnswer)
          again.push(...loading)
          again.sort((a, b) => a - b)
        } catch (err) {
          for (const i of loading) fail(i, err)
        }
      }
      // A NOSCRIPT or LOADING reply means that call did nothing, so only those calls are sent again.
      if (again.length > 0 && !reloaded && again.some((i) => !loading.includes(i))) {
        reloaded = true
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

  const scriptBatch = (calls: ReadonlyArray<ScriptCall>, opts?: ScriptBatchOptions): Effect.Effect<ReadonlyArray<BatchReply>> =>
    calls.length === 0
      ? Effect.sync(() => {
          opts?.onSent?.()
          return []
        })
      : Effect.promise(async () => {
          const buffers = opts?.buffers === true
          const replies: Array<BatchReply> = new Array(calls.length)
          // `pipelined` hands its calls to ioredis (written, or queued in order while reconnecting)
          // before its first await: `onSent` right after that call, before waiting for the replies.
          let sent = opts?.onSent
          const handedOver = () => {
            sent?.()
            sent = undefined
          }
          try {
            if (!isCluster) {
              const done = pipelined(client, calls, buffers, replies, undefined)
              handedOver()
              await done
            } else {
              // Bounded as a whole: calls (and script loads) held while no node is reachable time out.
              await bounded(
                (async () => {
                  await loadMissing(client, calls)
                  const groups = bySlot(calls)
                  const done =
                    groups.length === 1
                      ? pipelined(client, calls, buffers, replies, undefined)
                      : Promise.all(groups.map((idx) => pipelined(client, idx.map((i) => calls[i]!), buffers, replies, idx)))
                  handedOver()
                  await done
                })()
              )
            }
          } catch (err) {
            // A Cluster batch that timed out (or, defensively, any failure): each call left without
            // a reply gets the error; a copy is returned, as the calls still running may fill theirs.
            const out = replies.slice()
            for (let i = 0; i < calls.length; i++) if (out[i] === undefined) out[i] = { ok: false, error: scriptError(calls[i]!.script, err) }
            return out as ReadonlyArray<BatchReply>
          } finally {
            handedOver()
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
    scriptPromise: runPromise,
    scriptBatch,
    command: (op, args) => use(op, (c) => c.call(String(args[0]), ...args.slice(1))),
    connectionState: watcher.state,
    duplicate
  }
}

