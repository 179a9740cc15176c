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
