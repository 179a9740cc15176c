/**
 * One script call of the ioredis service (ioredisService.ts), outside a batch: EVAL with the source
 * on its script's first call on a single-node connection, else EVALSHA (again as EVAL on a
 * NOSCRIPT answer); a LOADING answer is waited out. The usual case (the script is cached on this
 * connection) is one EVALSHA and one handler on its Promise.
 */
import { isLoadingReply, type LoadingWait, whileLoading } from "./loading.js"
import {
  type ServiceContext,
  bounded,
  evalAgain,
  evalsha,
  evalshaArgs,
  isNoScript,
  scriptError,
  sendSource
} from "./ioredisContext.js"
import { RedisError } from "./errors.js"
import { type LuaName, luaScript } from "./scripts.js"
import type { ScriptArg } from "./transport.js"

/** One script call as a Promise that rejects with a RedisError. On a Cluster the whole call is bounded by the command timeout. */
export const runScriptPromise = (
  ctx: ServiceContext,
  name: LuaName,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  buffers: boolean
): Promise<unknown> =>
  ctx.isCluster
    ? bounded(ctx, runAttempt(ctx, name, keys, args, buffers, undefined)).catch((e: unknown) =>
        Promise.reject(e instanceof RedisError ? e : scriptError(ctx, name, e))
      )
    : runAttempt(ctx, name, keys, args, buffers, undefined)

/** One try of a script call; a LOADING answer waits (`wait`, started at the first) and tries again. */
const runAttempt = (
  ctx: ServiceContext,
  name: LuaName,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  buffers: boolean,
  wait: LoadingWait | undefined
): Promise<unknown> => {
  const failed = (e: unknown): Promise<unknown> => {
    if (!isLoadingReply(e)) throw scriptError(ctx, name, e)
    const w = wait ?? ctx.loadingWait()
    return w(e as Error).then(
      () => runAttempt(ctx, name, keys, args, buffers, w),
      (final: unknown) => Promise.reject(scriptError(ctx, name, final))
    )
  }
  const client = ctx.client
  try {
    const s = luaScript(name)
    if (sendSource(ctx, name)) {
      const argv = evalshaArgs(s.source, keys, args)
      return (buffers ? client.callBuffer("EVAL", ...argv) : client.call("EVAL", ...argv)).then((r) => {
        ctx.loaded.add(name)
        return r
      }, failed)
    }
    // One handler on the EVALSHA's Promise: a NOSCRIPT answer goes again as EVAL, any other error fails.
    return evalsha(ctx, client, s.sha, keys, args, buffers).then(undefined, (e: unknown) =>
      isNoScript(e) ? evalAgain(client, name, evalshaArgs(s.sha, keys, args), buffers).catch(failed) : failed(e)
    )
  } catch (e) {
    return Promise.reject(scriptError(ctx, name, e))
  }
}

/**
 * The script, `SORT list BY nosort GET get` and `DEL list` in one MULTI on a single node (the
 * transport's `scriptSorted`), bulk replies as bytes: EVAL with the source when the script is not
 * known to be cached on this connection, else EVALSHA; a NOSCRIPT answer inside the MULTI (the
 * script did not run, SORT found no list) sends the MULTI again with EVAL. A LOADING answer is
 * waited out. An error answer of SORT's (an ACL user without read access to every key: Redis 7
 * requires it for GET patterns) comes back as SORT's reply, an Error: the script has run.
 */
export const runScriptSortedPromise = (
  ctx: ServiceContext,
  name: LuaName,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  list: string,
  get: string
): Promise<readonly [unknown, unknown]> => {
  const send = (source: boolean): Promise<readonly [unknown, unknown]> => {
    const s = luaScript(name)
    const m = ctx.client.multi()
    m.callBuffer(source ? "EVAL" : "EVALSHA", ...evalshaArgs(source ? s.source : s.sha, keys, args))
    m.callBuffer("SORT", list, "BY", "nosort", "GET", get)
    m.call("DEL", list)
    return m.exec().then((replies) => {
      if (replies === null || replies.length !== 3) throw new Error(`MULTI of script ${name} was not executed`)
      const [scriptError_, scriptReply] = replies[0]!
      if (scriptError_) {
        if (!source && isNoScript(scriptError_)) return send(true)
        throw scriptError_
      }
      if (source) ctx.loaded.add(name)
      // SORT's own error answer (the script has run): given back in its place, for the caller to undo the script.
      const [sortError, sorted] = replies[1]!
      return [scriptReply, sortError ?? sorted] as const
    })
  }
  return whileLoading(() => send(!ctx.loaded.has(name)), ctx.loadingWait).catch((e: unknown) =>
    Promise.reject(e instanceof RedisError ? e : scriptError(ctx, name, e))
  )
}
