/**
 * A batch of script calls on the ioredis service (ioredisService.ts): one pipeline on a single node
 * (one plain call when it holds one), one pipeline per hash slot on a Cluster (after loading the
 * scripts its masters have not seen), each call its own reply. NOSCRIPT calls are sent again once
 * (after loading the script), LOADING ones while the server loads; the rest of the batch is not.
 * A call with a SORT read (`ScriptCall.sorted`, single node only) goes as its own MULTI right
 * after the pipeline, on the same connection: Redis runs it after the batch's other calls.
 */
import * as Effect from "effect/Effect"
import type { ChainableCommander } from "ioredis"
import { isLoadingReply, type LoadingWait } from "./loading.js"
import {
  type ServiceContext,
  bounded,
  evalsha,
  evalshaArgs,
  isClusterClient,
  isNoScript,
  loadFor,
  scriptError,
  sendSource
} from "./ioredisContext.js"
import { RedisError } from "./errors.js"
import { runScriptSortedPromise } from "./ioredisScript.js"
import { keySlot } from "./keySlot.js"
import { type LuaName, luaScript } from "./scripts.js"
import type { RedisClient } from "./Redis.js"
import type { BatchReply, ScriptBatchOptions, ScriptCall } from "./transport.js"

/** A reply that succeeded (one shared function: no closure per call). */
const okReply = (value: unknown): BatchReply => ({ ok: true, value })

/**
 * One call of a batch, alone: EVAL with the source or EVALSHA (loading the script on NOSCRIPT);
 * LOADING is waited out (`wait`, started at the first LOADING answer). The usual case (the script
 * is cached, the server answers) is one EVALSHA and one handler on its Promise: the NOSCRIPT and
 * LOADING handling is only reached from its rejection.
 */
const single = (
  ctx: ServiceContext,
  c: RedisClient,
  call: ScriptCall,
  buffers: boolean,
  wait?: LoadingWait
): Promise<BatchReply> => {
  const failed = (err: unknown): BatchReply | Promise<BatchReply> => {
    if (!isLoadingReply(err)) return { ok: false, error: scriptError(ctx, call.script, err) }
    const w = wait ?? ctx.loadingWait()
    return w(err as Error).then(
      () => single(ctx, c, call, buffers, w),
      (final: unknown): BatchReply => ({ ok: false, error: scriptError(ctx, call.script, final) })
    )
  }
  try {
    const s = luaScript(call.script)
    if (sendSource(ctx, call.script)) {
      const argv = evalshaArgs(s.source, call.keys, call.args)
      return (buffers ? c.callBuffer("EVAL", ...argv) : c.call("EVAL", ...argv)).then((value) => {
        ctx.loaded.add(call.script)
        return okReply(value)
      }, failed)
    }
    return evalsha(ctx, c, s.sha, call.keys, call.args, buffers).then(okReply, (err: unknown) =>
      isNoScript(err)
        ? loadFor(c, s.source, [call])
            .then(() => evalsha(ctx, c, s.sha, call.keys, call.args, buffers))
            .then(okReply, failed)
        : failed(err)
    )
  } catch (err) {
    return Promise.resolve(failed(err))
  }
}

/**
 * Loads the scripts of a batch not yet known to be cached (a failure is left to the calls
 * themselves: they answer NOSCRIPT or their own error). On a cluster, per script and master
 * (only the masters of the calls' slots are asked).
 */
const loadMissing = async (ctx: ServiceContext, c: RedisClient, calls: ReadonlyArray<ScriptCall>) => {
  for (const call of calls) {
    const name = call.script
    const key = isClusterClient(c)
      ? `${name} ${c.slots[call.keys.length === 0 ? -1 : keySlot(call.keys[0]!)]?.[0] ?? "*"}`
      : name
    if (ctx.loaded.has(key)) continue
    try {
      await loadFor(
        c,
        luaScript(name).source,
        calls.filter((x) => x.script === name)
      )
      ctx.loaded.add(key)
    } catch {
      // e.g. one cluster node unreachable: the calls to it fail on their own (they answer
      // NOSCRIPT and are loaded again, or fail with the node's error). Loading the others would
      // only wait for the same failure again.
      return
    }
  }
}

/**
 * Queues the `pending` calls on pipeline `p`. On the first attempt a script's first call in the
 * pipeline goes as EVAL when the connection has not run it yet (it caches it for the EVALSHAs
 * after it: one connection runs them in order); returns the scripts sent so.
 */
const queueCalls = (
  ctx: ServiceContext,
  p: ChainableCommander,
  calls: ReadonlyArray<ScriptCall>,
  pending: ReadonlyArray<number>,
  buffers: boolean,
  first: boolean
) => {
  const sourced = new Set<LuaName>()
  for (const i of pending) {
    const call = calls[i]!
    const s = luaScript(call.script)
    const argv = evalshaArgs(s.sha, call.keys, call.args)
    let command = "EVALSHA"
    if (first && sendSource(ctx, call.script) && !sourced.has(call.script)) {
      sourced.add(call.script)
      argv[0] = s.source
      command = "EVAL"
    }
    if (call.buffers ?? buffers) p.callBuffer(command, ...argv)
    else p.call(command, ...argv)
  }
  return sourced
}

/** Marks call `i` of a pipeline failed (in its reply slot of the batch). */
type Fail = (i: number, err: unknown) => void

/**
 * Sorts one pipeline's answers: each reply lands in `replies` (`at` maps a call to its slot in the
 * batch), a NOSCRIPT call (once) goes in `again`, a LOADING one in `loading`, any other error fails
 * its call. Returns the LOADING answer to wait out, if any.
 */
const sortAnswers = (
  res: Array<[Error | null, unknown]>,
  pending: ReadonlyArray<number>,
  reloaded: boolean,
  replies: Array<BatchReply>,
  at: ReadonlyArray<number> | undefined,
  fail: Fail,
  again: Array<number>,
  loading: Array<number>
): Error | undefined => {
  let loadingAnswer: Error | undefined
  pending.forEach((i, j) => {
    const [err, value] = res[j] ?? [new Error("no reply in the pipeline's answer"), undefined]
    if (err && isNoScript(err) && !reloaded) again.push(i)
    else if (err && isLoadingReply(err)) {
      loading.push(i)
      loadingAnswer = err
    } else if (err) fail(i, err)
    else replies[at ? at[i]! : i] = { ok: true, value }
  })
  return loadingAnswer
}

/** One pipeline of calls (of one slot on a cluster), each call its own reply; NOSCRIPT calls are sent again once. */
const pipelined = (
  ctx: ServiceContext,
  c: RedisClient,
  calls: ReadonlyArray<ScriptCall>,
  buffers: boolean,
  replies: Array<BatchReply>,
  at: ReadonlyArray<number> | undefined
): Promise<void> =>
  // One call: a plain EVALSHA (a pipeline costs more CPU for no gain), without the pipeline's state.
  calls.length === 1
    ? single(ctx, c, calls[0]!, calls[0]!.buffers ?? buffers).then((reply) => {
        replies[at ? at[0]! : 0] = reply
      })
    : pipelinedMany(ctx, c, calls, buffers, replies, at)

/** `pipelined` for two calls or more. */
const pipelinedMany = async (
  ctx: ServiceContext,
  c: RedisClient,
  calls: ReadonlyArray<ScriptCall>,
  buffers: boolean,
  replies: Array<BatchReply>,
  at: ReadonlyArray<number> | undefined
) => {
  const fail: Fail = (i, err) =>
    (replies[at ? at[i]! : i] = { ok: false, error: scriptError(ctx, calls[i]!.script, err) })
  let pending = calls.map((_, i) => i)
  // NOSCRIPT calls go again once (after loading the script); LOADING ones (nothing ran) while the server loads.
  let reloaded = false
  let wait: LoadingWait | undefined
  for (let attempt = 0; pending.length > 0; attempt++) {
    const p = c.pipeline()
    const sourced = queueCalls(ctx, p, calls, pending, buffers, attempt === 0)
    let res: Array<[Error | null, unknown]>
    try {
      res = (await p.exec()) ?? []
    } catch (err) {
      // The round trip itself failed: every call it carried fails with that error.
      for (const i of pending) fail(i, err)
      return
    }
    for (const name of sourced) ctx.loaded.add(name)
    const again: Array<number> = []
    const loading: Array<number> = []
    const loadingAnswer = sortAnswers(res, pending, reloaded, replies, at, fail, again, loading)
    if (loadingAnswer !== undefined) {
      try {
        wait ??= ctx.loadingWait()
        await wait(loadingAnswer)
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

/** A Cluster batch: the scripts its masters lack loaded, then one pipeline per slot; `handedOver` once they are all handed to ioredis. */
const clusterBatch = (
  ctx: ServiceContext,
  calls: ReadonlyArray<ScriptCall>,
  buffers: boolean,
  replies: Array<BatchReply>,
  handedOver: () => void,
  /** The calls' slots in `replies` (default: their own indexes). */
  at?: ReadonlyArray<number>
) =>
  // Bounded as a whole: calls (and script loads) held while no node is reachable time out.
  bounded(
    ctx,
    (async () => {
      await loadMissing(ctx, ctx.client, calls)
      const groups = bySlot(calls)
      const done =
        groups.length === 1
          ? pipelined(ctx, ctx.client, calls, buffers, replies, at)
          : Promise.all(
              groups.map((idx) =>
                pipelined(
                  ctx,
                  ctx.client,
                  idx.map((i) => calls[i]!),
                  buffers,
                  replies,
                  at ? idx.map((i) => at[i]!) : idx
                )
              )
            )
      handedOver()
      await done
    })()
  )

/** Whether a call of the batch has a SORT read (a plain loop: this runs for every batch). */
const hasSortedRead = (calls: ReadonlyArray<ScriptCall>): boolean => {
  for (let i = 0; i < calls.length; i++) if (calls[i]!.sorted !== undefined) return true
  return false
}

/** The batch's calls split into those without a SORT read and those with one (indexes, in call order). */
const splitSortedReads = (calls: ReadonlyArray<ScriptCall>) => {
  const plain: Array<number> = []
  const sorted: Array<number> = []
  calls.forEach((call, i) => (call.sorted === undefined ? plain : sorted).push(i))
  return { plain, sorted }
}

/**
 * A single node's batch holding calls with a SORT read: the other calls in one pipeline, then each
 * of those as its own MULTI (runScriptSortedPromise), all handed to the connection before the
 * first await, in that order. A MULTI's reply is `[scriptReply, sortReply]`.
 */
const withSortedReads = (
  ctx: ServiceContext,
  calls: ReadonlyArray<ScriptCall>,
  buffers: boolean,
  replies: Array<BatchReply>
): Promise<unknown> => {
  const { plain, sorted } = splitSortedReads(calls)
  const done: Array<Promise<unknown>> = []
  if (plain.length > 0)
    done.push(
      pipelined(
        ctx,
        ctx.client,
        plain.map((i) => calls[i]!),
        buffers,
        replies,
        plain
      )
    )
  for (const i of sorted) {
    const call = calls[i]!
    done.push(
      runScriptSortedPromise(ctx, call.script, call.keys, call.args, call.sorted!.list, call.sorted!.get).then(
        (value) => {
          replies[i] = { ok: true, value }
        },
        (err: unknown) => {
          replies[i] = { ok: false, error: err instanceof RedisError ? err : scriptError(ctx, call.script, err) }
        }
      )
    )
  }
  return Promise.all(done)
}

/** Runs a batch: each call its own reply (never fails as a whole). */
export const scriptBatch = (
  ctx: ServiceContext,
  calls: ReadonlyArray<ScriptCall>,
  opts?: ScriptBatchOptions
): Effect.Effect<ReadonlyArray<BatchReply>> =>
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
          if (!ctx.isCluster) {
            const done = hasSortedRead(calls)
              ? withSortedReads(ctx, calls, buffers, replies)
              : pipelined(ctx, ctx.client, calls, buffers, replies, undefined)
            handedOver()
            await done
          } else if (!hasSortedRead(calls)) await clusterBatch(ctx, calls, buffers, replies, handedOver)
          else {
            // A Cluster denies SORT's GET option: such a call fails alone, the others go as usual.
            const { plain, sorted } = splitSortedReads(calls)
            for (const i of sorted)
              replies[i] = {
                ok: false,
                error: scriptError(
                  ctx,
                  calls[i]!.script,
                  new Error("a script's SORT read cannot be sent: a Cluster denies SORT's GET option")
                )
              }
            await clusterBatch(
              ctx,
              plain.map((i) => calls[i]!),
              buffers,
              replies,
              handedOver,
              plain
            )
          }
        } catch (err) {
          // A Cluster batch that timed out (or, defensively, any failure): each call left without
          // a reply gets the error; a copy is returned, as the calls still running may fill theirs.
          const out = replies.slice()
          for (let i = 0; i < calls.length; i++)
            if (out[i] === undefined) out[i] = { ok: false, error: scriptError(ctx, calls[i]!.script, err) }
          return out as ReadonlyArray<BatchReply>
        } finally {
          handedOver()
        }
        return replies as ReadonlyArray<BatchReply>
      })
