/**
 * What the calls of the ioredis service share (ioredisService.ts): the open client, its limits,
 * the scripts it has cached, and the pieces every call uses — the EVALSHA arguments, the framed
 * EVALSHA of a single node, script loads where the calls run, and how a failure is reported.
 * ioredis is imported for its types only.
 */
import type { Cluster, Redis as IORedis } from "ioredis"
import { CommandTimeout, errorMessage, type RedisError, redisError } from "./errors.js"
import type { LoadingWait } from "./loading.js"
import { keySlot } from "./keySlot.js"
import { evalshaFrames } from "./respFrame.js"
import { type LuaName, luaScript } from "./scripts.js"
import type { RedisClient } from "./Redis.js"
import type { ScriptArg, ScriptCall } from "./transport.js"

/** Whether the client is a Redis Cluster (read from the client: no ioredis class is imported). */
export const isClusterClient = (c: RedisClient): c is Cluster => c.isCluster === true

/** ioredis sends a Buffer as raw bytes but a plain Uint8Array as the text "10,3,…": wrap it (no copy). */
const toArg = (a: ScriptArg): string | number | Buffer =>
  typeof a === "string" || typeof a === "number" || Buffer.isBuffer(a)
    ? a
    : Buffer.from(a.buffer, a.byteOffset, a.byteLength)
/** EVALSHA's arguments: sha, key count, keys, args (one array, no intermediate copies). */
export const evalshaArgs = (
  sha: string,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>
): Array<string | number | Buffer> => {
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
export type CommandClass = new (
  name: string,
  args: Array<string>,
  options: { replyEncoding: string | null; errorStack?: Error | undefined }
) => CommandLike

/**
 * A single node's (or Sentinel master's) EVALSHA sent as RESP bytes built in one Buffer
 * (respFrame.ts) instead of ioredis assembling them argument by argument: an ioredis Command whose
 * writable form is that Buffer, sent with `sendCommand`, so ioredis still queues it, reads its
 * reply, times it out, and writes the same bytes again if it resends it after a reconnect. Its
 * `args` are the SHA, the key count and the keys (what ioredis's tracing reports). Undefined when
 * the client does not allow it: a Cluster (ioredis routes by the keys it parses), a client with a
 * `keyPrefix` (ioredis would prefix the keys), or no Command class given.
 */
export const framedEvalsha = (
  client: RedisClient,
  Base: CommandClass | undefined
):
  | ((sha: string, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) => Promise<unknown>)
  | undefined => {
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
    const command = new Base("evalsha", noArgs, {
      replyEncoding: buffers ? null : "utf8",
      errorStack: errorStack ? new Error() : undefined
    }) as CommandLike & {
      toWritable: () => Buffer
      args: Array<string>
    }
    command.args = shown
    command.toWritable = () => frame
    corkForTick(client)
    return client.sendCommand(command as never) as Promise<unknown>
  }
}

/** The sockets corked until the end of the current tick (`corkForTick`). */
const corked = new WeakSet<object>()

/**
 * Corks the client's socket until the end of the current tick (process.nextTick), so the commands
 * sent meanwhile — the calls of many fibers resumed by one reply — go out in one write instead of
 * one each: a socket write costs far more CPU than the bytes it carries. Only while at least
 * `corkFromInFlight` other commands wait for their replies (many callers at once, as the workflow
 * engine's runs): a lone command, or a worker's few calls in flight, go out at once, with no cork
 * (for those a cork only adds its own cost: 1.13× the Node CPU per task at 1 KB payloads).
 * Nothing is held past the current tick (holding writes to the event loop's check phase saved more
 * writes but left Redis idle while a worker read large replies: 0.67× the rate at 1 KB payloads);
 * ioredis still queues each command for its reply, in order.
 */
/** Commands waiting for replies from which the socket is corked (fewer: each call is written at once). */
const corkFromInFlight = 4

const corkForTick = (client: RedisClient) => {
  const c = client as {
    readonly stream?: { cork?: () => void; uncork?: () => void }
    readonly commandQueue?: { readonly length: number }
  }
  const socket = c.stream
  if (socket === undefined || typeof socket.cork !== "function" || corked.has(socket)) return
  if (c.commandQueue === undefined || c.commandQueue.length < corkFromInFlight) return
  corked.add(socket)
  socket.cork()
  process.nextTick(uncorkSocket, socket)
}
const uncorkSocket = (socket: object) => {
  corked.delete(socket)
  ;(socket as { uncork?: () => void }).uncork?.()
}

const noArgs: Array<string> = []

export const isNoScript = (e: unknown) => errorMessage(e).startsWith("NOSCRIPT")

/** The command timeout an ioredis client was opened with (a Cluster's is in its nodes' options), if any. */
export const configuredTimeout = (c: RedisClient): number | undefined => {
  const o = (isClusterClient(c) ? c.options.redisOptions : c.options) as
    | { readonly commandTimeout?: unknown }
    | undefined
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
export const loadFor = async (c: RedisClient, source: string, calls: ReadonlyArray<ScriptCall>) => {
  if (isClusterClient(c)) await Promise.all(mastersFor(c, calls).map((n) => n.script("LOAD", source)))
  else await c.script("LOAD", source)
}

/** A single node's framed EVALSHA (`framedEvalsha`). */
export type FramedEvalsha = (
  sha: string,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  buffers: boolean
) => Promise<unknown>

/** What the service's calls share. */
export interface ServiceContext {
  readonly client: RedisClient
  readonly isCluster: boolean
  /** The server(s), as errors name them. */
  readonly target: string
  readonly commandTimeoutMs: number
  /** Starts waiting out a LOADING answer (loading.ts). */
  readonly loadingWait: () => LoadingWait
  /**
   * Scripts known to be cached on the server(s) of this connection. On a single node (or
   * Sentinel's master) a script's first call on a connection is sent as EVAL with its source,
   * which runs it and caches it in one round trip (a cold start pays no SCRIPT LOAD); later calls
   * are EVALSHA. On a cluster a batch first loads any script it has not seen on every master, so
   * its EVALSHAs cannot fail with NOSCRIPT half-way and run out of order. A reconnect (possibly to
   * a promoted replica) forgets the set. Only a SCRIPT FLUSH between two batches can still make a
   * batch retry its NOSCRIPT calls after the later calls ran.
   */
  readonly loaded: Set<string>
  /** The framed EVALSHA of the service's own client, when it allows one. */
  readonly framed: FramedEvalsha | undefined
}

/** No reply within the command timeout, saying so when the connection was not ready. */
export const timedOut = (ctx: ServiceContext) =>
  new CommandTimeout(
    ctx.target,
    ctx.commandTimeoutMs,
    "commandTimeoutMs",
    ctx.client.status === "ready" ? undefined : `the connection is ${ctx.client.status}`
  )

/** A failure as the RedisError of `op`: ioredis's "Command timed out" becomes a CommandTimeout naming the server. */
export const failure = (ctx: ServiceContext, op: string, cause: unknown): RedisError =>
  redisError(op, errorMessage(cause) === "Command timed out" ? timedOut(ctx) : cause)

export const scriptError = (ctx: ServiceContext, name: LuaName, cause: unknown) => failure(ctx, `script ${name}`, cause)

/**
 * On a Cluster, `p` bounded by the command timeout: while no node is reachable ioredis's Cluster
 * holds calls in a queue of its own that no timeout covers (a node's connection times out only
 * what it was handed). Single node and Sentinel: their command deadlines (commandDeadlines.ts) cover their queues too.
 */
export const bounded = <A>(ctx: ServiceContext, p: Promise<A>): Promise<A> =>
  !ctx.isCluster
    ? p
    : new Promise<A>((resolve, reject) => {
        const timer = setTimeout(() => reject(timedOut(ctx)), ctx.commandTimeoutMs)
        p.then(
          (v) => {
            clearTimeout(timer)
            resolve(v)
          },
          (e: unknown) => {
            clearTimeout(timer)
            reject(e)
          }
        )
      })

/** Whether this call goes as EVAL with the source (its script's first call on a single-node connection). */
export const sendSource = (ctx: ServiceContext, name: LuaName) => !ctx.isCluster && !ctx.loaded.has(name)

/** After a NOSCRIPT answer: the same call again as EVAL with the source (which caches it). */
export const evalAgain = (
  c: RedisClient,
  name: LuaName,
  argv: Array<string | number | Buffer>,
  buffers: boolean
): Promise<unknown> => {
  argv[0] = luaScript(name).source
  return buffers ? c.callBuffer("EVAL", ...argv) : c.call("EVAL", ...argv)
}

/** One EVALSHA on `c`: framed (prebuilt bytes) on the service's own client when it allows it, else through ioredis's call. */
export const evalsha = (
  ctx: ServiceContext,
  c: RedisClient,
  sha: string,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  buffers: boolean
): Promise<unknown> => {
  if (ctx.framed !== undefined && c === ctx.client) return ctx.framed(sha, keys, args, buffers)
  const argv = evalshaArgs(sha, keys, args)
  return buffers ? c.callBuffer("EVALSHA", ...argv) : c.call("EVALSHA", ...argv)
}
