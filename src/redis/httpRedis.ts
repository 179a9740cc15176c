/**
 * The Redis service over HTTP (Upstash's REST protocol, see restProtocol.ts), built on `fetch`
 * alone, so it runs in Cloudflare Workers, Vercel Edge, Deno, Bun and Node.
 *
 * Why not the `@upstash/redis` SDK: the queue steps need four things from Redis — EVAL/EVALSHA
 * with a NOSCRIPT fallback, a pipeline of script calls with one outcome each, bytes in and out,
 * and a plain command — and none of the SDK's typed command surface, which every bundle would
 * carry. The protocol carries arguments as JSON strings, so a task message's bytes (rarely valid
 * UTF-8) need the base64 + Lua prelude scheme of restProtocol.ts whichever client sends them: with
 * the SDK we would still build the script calls and that encoding ourselves. What is left is one
 * POST per call or pipeline, which `fetch` does in a few lines.
 *
 * Scripts: the first call of a script in an isolate is an EVAL (which also caches it on the
 * server), later calls an EVALSHA; a NOSCRIPT answer (the server's cache was flushed) sends that
 * call again as an EVAL, in one more round trip for all such calls of a batch. Only the scripts
 * given in `scripts` can run: a bundle carries the Lua sources it names and no others.
 */
import * as Effect from "effect/Effect"
import { CommandTimeout, RedisConnectionError, RedisError, errorMessage, redisError } from "./errors.js"
import type { LuaName } from "./lua.generated.js"
import type { RedisShape } from "./Redis.js"
import { type CommandAnswer, scriptCalls } from "./scriptCalls.js"
import type { ScriptArg, ScriptCall } from "./transport.js"
import { sha1Hex } from "../hash/sha1.js"
import { decodeResult, encodeScriptArgs, withPrelude } from "./restProtocol.js"

/** Where an HTTP Redis (Upstash's REST protocol) is: its URL and token, and how long one request may take. */
export interface HttpRedisOptions {
  /** The REST URL (e.g. Upstash's `UPSTASH_REDIS_REST_URL`), http: or https:. */
  readonly url: string
  /** The bearer token (e.g. `UPSTASH_REDIS_REST_TOKEN`). */
  readonly token: string
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch
  /**
   * How long one call may take, ms (default 10000, under Vercel Edge's 25 s). The edge client's
   * `enqueue` and `enqueueMany` fail within it, resends included: each request is given a third of
   * it, and a request without an answer by then is a lost reply (a write is then sent again as the
   * same write, which cannot make a second task). For the Layer and the tick, it bounds each request.
   * Either way the failure is a RedisError whose cause is a CommandTimeout naming the endpoint.
   */
  readonly timeoutMs?: number
}

/** `timeoutMs` when not given. */
export const defaultHttpTimeoutMs = 10_000

/** Lua sources by script name: the scripts a transport may run. */
export type ScriptSources = Partial<Record<LuaName, string>>

/** An error answer from the server (the command ran and failed, or was refused): named like ioredis's, see isErrorReply. */
class ReplyError extends Error {
  override readonly name = "ReplyError"
}

/** Why these options cannot reach a REST endpoint, or undefined when they can. */
export const invalidHttpRedisOptions = (o: HttpRedisOptions): string | undefined => {
  if (typeof o.url !== "string" || o.url === "") return "url is required (the REST URL, e.g. UPSTASH_REDIS_REST_URL)"
  let u: URL
  try {
    u = new URL(o.url)
  } catch {
    return `the url does not parse: "${o.url}"`
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    return `the url's scheme must be https: or http:, got ${u.protocol}`
  if (typeof o.token !== "string" || o.token === "") return "token is required (e.g. UPSTASH_REDIS_REST_TOKEN)"
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0))
    return `timeoutMs must be a number of milliseconds > 0, got ${o.timeoutMs}`
  return undefined
}

/** The URL for messages: no credentials, no query. */
export const describeHttpTarget = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`
  } catch {
    return "(invalid url)"
  }
}

interface Answer {
  readonly result?: unknown
  readonly error?: string
}

const notOverHttp = (what: string) =>
  `${what} needs a TCP connection (ioredis); over HTTP only script calls and plain commands are available`

/** One POST to the REST endpoint: the parsed JSON answer, or a thrown error (an HTTP error with a JSON `error` is a ReplyError). */
type Post = (path: string, body: unknown) => Promise<unknown>

/** The POST of the service at `options.url`, each bounded by its timeout. */
const httpPost = (options: HttpRedisOptions, target: string, requestTimeoutMs: number | undefined): Post => {
  const base = options.url.replace(/\/+$/, "")
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  const timeoutMs = requestTimeoutMs ?? options.timeoutMs ?? defaultHttpTimeoutMs
  const timeoutOption = requestTimeoutMs === undefined ? "timeoutMs" : "a third of timeoutMs, per request"
  const headers = {
    authorization: `Bearer ${options.token}`,
    "content-type": "application/json",
    "upstash-encoding": "base64"
  }
  return async (path, body) => {
    const res = await doFetch(base + path, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs)
    }).catch((e: unknown) => {
      if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError"))
        throw new CommandTimeout(target, timeoutMs, timeoutOption)
      // e.g. "fetch failed" (refused, DNS, TLS): say where, and why when the runtime tells.
      const why = e instanceof Error && e.cause !== undefined ? ` (${errorMessage(e.cause)})` : ""
      throw new Error(`cannot reach ${target}: ${errorMessage(e)}${why}`, { cause: e })
    })
    const text = await res.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new Error(`HTTP ${res.status} from ${target}: ${text.slice(0, 200) || "(empty body)"}`)
    }
    if (!res.ok) {
      const error =
        typeof json === "object" && json !== null && typeof (json as Answer).error === "string"
          ? (json as Answer).error!
          : text.slice(0, 200)
      throw new ReplyError(
        res.status === 401 || res.status === 403 ? `${target} refused the token (HTTP ${res.status}): ${error}` : error
      )
    }
    return json
  }
}

/** The EVAL (with the source) or EVALSHA command of a call, from the scripts the transport was given (their SHA1s computed once). */
const scriptCommands = (scripts: ScriptSources) => {
  const shas = new Map<LuaName, string>()
  const sourceOf = (name: LuaName): string => {
    const s = scripts[name]
    if (s === undefined)
      throw new Error(`script ${name} is not among the scripts this HTTP transport was given (pass it in \`scripts\`)`)
    return withPrelude(s)
  }
  const shaOf = (name: LuaName): string => {
    let sha = shas.get(name)
    if (sha === undefined) {
      sha = sha1Hex(sourceOf(name))
      shas.set(name, sha)
    }
    return sha
  }
  return (call: ScriptCall, withSource: boolean): ReadonlyArray<ScriptArg> => [
    withSource ? "EVAL" : "EVALSHA",
    withSource ? sourceOf(call.script) : shaOf(call.script),
    call.keys.length,
    ...call.keys,
    ...encodeScriptArgs(call.args)
  ]
}

/** One round trip: one command as a plain POST (its error answer comes back as an HTTP error), several as a pipeline. */
const httpRoundTrip =
  (post: Post, target: string) =>
  async (commands: ReadonlyArray<ReadonlyArray<ScriptArg>>): Promise<ReadonlyArray<CommandAnswer>> => {
    if (commands.length === 1) {
      try {
        return [{ ok: true, value: ((await post("", commands[0])) as Answer).result }]
      } catch (e) {
        if (!(e instanceof ReplyError)) throw e
        return [{ ok: false, error: e }]
      }
    }
    const json = await post("/pipeline", commands)
    if (!Array.isArray(json) || json.length !== commands.length)
      throw new Error(`${target} answered the pipeline with ${JSON.stringify(json)?.slice(0, 200)}`)
    return (json as Array<Answer>).map((a) =>
      typeof a.error === "string" ? { ok: false, error: new ReplyError(a.error) } : { ok: true, value: a.result }
    )
  }

/**
 * The service over HTTP. `use`, `client` and `duplicate` (ioredis, pub/sub) do not exist over HTTP:
 * they fail with a RedisError saying so. The queue steps of `effect-asynq/edge` need none of them.
 */
export const makeHttpRedis = (
  options: HttpRedisOptions,
  scripts: ScriptSources,
  requestTimeoutMs?: number
): RedisShape => {
  const target = describeHttpTarget(options.url)
  const post = httpPost(options, target, requestTimeoutMs)
  const calls = scriptCalls({
    // The scripts run in this isolate so far (the server keeps them cached).
    loaded: new Set<LuaName>(),
    command: scriptCommands(scripts),
    roundTrip: httpRoundTrip(post, target),
    decode: decodeResult
  })
  const command = (op: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: async () => decodeResult(((await post("", args)) as Answer).result, false),
      catch: (cause) => redisError(op, cause)
    })
  const shape: Omit<RedisShape, "client"> = {
    isCluster: false,
    target,
    ...calls,
    command,
    use: (op) => Effect.fail(new RedisError({ op, message: notOverHttp(op) })),
    connectionState: () => ({ down: false, outages: 0 }) as ReturnType<RedisShape["connectionState"]>,
    duplicate: Effect.fail(
      new RedisConnectionError({ target, message: notOverHttp("a second connection (blocking commands, pub/sub)") })
    )
  }
  return Object.defineProperty(shape, "client", {
    get: () => {
      throw new Error(notOverHttp("the ioredis client"))
    }
  }) as RedisShape
}
