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
import { RedisConnectionError, RedisError, errorMessage } from "./errors.js"
import type { LuaName } from "./lua.generated.js"
import type { RedisShape } from "./Redis.js"
import type { BatchReply, ScriptArg, ScriptCall } from "./transport.js"
import { decodeResult, encodeScriptArgs, withPrelude } from "./restProtocol.js"

export interface HttpRedisOptions {
  /** The REST URL (e.g. Upstash's `UPSTASH_REDIS_REST_URL`), http: or https:. */
  readonly url: string
  /** The bearer token (e.g. `UPSTASH_REDIS_REST_TOKEN`). */
  readonly token: string
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch
  /**
   * Give up on a request after this long, ms (default 10000): it fails as a lost reply (a write is
   * then sent again as the same write, which cannot make a second task).
   */
  readonly timeoutMs?: number
}

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
  if (u.protocol !== "https:" && u.protocol !== "http:") return `the url's scheme must be https: or http:, got ${u.protocol}`
  if (typeof o.token !== "string" || o.token === "") return "token is required (e.g. UPSTASH_REDIS_REST_TOKEN)"
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0)) return `timeoutMs must be a number of milliseconds > 0, got ${o.timeoutMs}`
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

const sha1Hex = async (text: string): Promise<string> => {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text)))
  let hex = ""
  for (const b of digest) hex += b.toString(16).padStart(2, "0")
  return hex
}

const notOverHttp = (what: string) => `${what} needs a TCP connection (ioredis); over HTTP only script calls and plain commands are available`

/**
 * The service over HTTP. `use`, `client` and `duplicate` (ioredis, pub/sub) do not exist over HTTP:
 * they fail with a RedisError saying so. The queue steps of `effect-asynq/edge` need none of them.
 */
export const makeHttpRedis = (options: HttpRedisOptions, scripts: ScriptSources): RedisShape => {
  const target = describeHttpTarget(options.url)
  const base = options.url.replace(/\/+$/, "")
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  const timeoutMs = options.timeoutMs ?? 10_000
  const headers = { authorization: `Bearer ${options.token}`, "content-type": "application/json", "upstash-encoding": "base64" }

  /** One POST; the parsed JSON answer, or a thrown error (an HTTP error with a JSON `error` is a ReplyError). */
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const res = await doFetch(base + path, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) }).catch((e: unknown) => {
      throw e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError") ? new Error(`no answer from ${target} within ${timeoutMs} ms`) : e
    })
    const text = await res.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new Error(`HTTP ${res.status} from ${target}: ${text.slice(0, 200) || "(empty body)"}`)
    }
    if (!res.ok) {
      const error = typeof json === "object" && json !== null && typeof (json as Answer).error === "string" ? (json as Answer).error! : text.slice(0, 200)
      throw new ReplyError(res.status === 401 || res.status === 403 ? `${target} refused the token (HTTP ${res.status}): ${error}` : error)
    }
    return json
  }

  const shas = new Map<LuaName, Promise<string>>()
  const loaded = new Set<LuaName>()
  const sourceOf = (name: LuaName): string => {
    const s = scripts[name]
    if (s === undefined) throw new Error(`script ${name} is not among the scripts this HTTP transport was given (pass it in \`scripts\`)`)
    return withPrelude(s)
  }
  const shaOf = (name: LuaName): Promise<string> => {
    let p = shas.get(name)
    if (!p) {
      p = sha1Hex(sourceOf(name))
      shas.set(name, p)
    }
    return p
  }

  /** The command of one script call: EVAL the first time in this isolate (or `forceEval`), else EVALSHA. */
  const scriptCommand = async (call: ScriptCall, forceEval: boolean): Promise<Array<string | number>> => {
    const tail = [call.keys.length, ...call.keys, ...encodeScriptArgs(call.args)]
    if (forceEval || !loaded.has(call.script)) return ["EVAL", sourceOf(call.script), ...tail]
    return ["EVALSHA", await shaOf(call.script), ...tail]
  }

  const failure = (call: ScriptCall, err: unknown): BatchReply => ({
    ok: false,
    error: new RedisError({ op: `script ${call.script}`, message: errorMessage(err), cause: err })
  })

  /** Runs the calls (one POST, or a pipeline), resending NOSCRIPT answers once as EVAL. */
  const runCalls = async (calls: ReadonlyArray<ScriptCall>, buffers: boolean): Promise<Array<BatchReply>> => {
    const replies: Array<BatchReply> = new Array(calls.length)
    let pending = calls.map((_, i) => i)
    for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
      let answers: Array<Answer>
      try {
        const commands = await Promise.all(pending.map((i) => scriptCommand(calls[i]!, attempt > 0)))
        if (commands.length === 1) {
          try {
            answers = [(await post("", commands[0])) as Answer]
          } catch (e) {
            // A single command's error answer comes back as an HTTP error.
            if (!(e instanceof ReplyError)) throw e
            answers = [{ error: e.message }]
          }
        } else {
          const json = await post("/pipeline", commands)
          if (!Array.isArray(json) || json.length !== commands.length) throw new Error(`${target} answered the pipeline with ${JSON.stringify(json)?.slice(0, 200)}`)
          answers = json as Array<Answer>
        }
      } catch (err) {
        for (const i of pending) replies[i] = failure(calls[i]!, err)
        return replies
      }
      const again: Array<number> = []
      pending.forEach((i, j) => {
        const call = calls[i]!
        const a = answers[j] ?? {}
        if (typeof a.error === "string") {
          if (a.error.startsWith("NOSCRIPT") && attempt === 0) again.push(i)
          else replies[i] = failure(call, new ReplyError(a.error))
        } else {
          loaded.add(call.script)
          replies[i] = { ok: true, value: decodeResult(a.result, call.buffers ?? buffers) }
        }
      })
      pending = again
    }
    return replies
  }

  const run = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    Effect.flatMap(
      Effect.promise(() => runCalls([{ script: name, keys, args }], buffers)),
      ([r]) => (r!.ok ? Effect.succeed(r!.value) : Effect.fail(r!.error))
    )

  const command = (op: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: async () => decodeResult(((await post("", args)) as Answer).result, false),
      catch: (cause) => new RedisError({ op, message: errorMessage(cause), cause })
    })

  const shape: Omit<RedisShape, "client"> = {
    isCluster: false,
    target,
    script: (name, keys, args) => run(name, keys, args, false),
    scriptBuffer: (name, keys, args) => run(name, keys, args, true),
    scriptBatch: (calls, opts) => (calls.length === 0 ? Effect.succeed([]) : Effect.promise(() => runCalls(calls, opts?.buffers === true))),
    command,
    use: (op) => Effect.fail(new RedisError({ op, message: notOverHttp(op) })),
    connectionState: () => ({ down: false, outages: 0 }) as ReturnType<RedisShape["connectionState"]>,
    duplicate: Effect.fail(new RedisConnectionError({ target, message: notOverHttp("a second connection (blocking commands, pub/sub)") }))
  }
  return Object.defineProperty(shape, "client", {
    get: () => {
      throw new Error(notOverHttp("the ioredis client"))
    }
  }) as RedisShape
}
