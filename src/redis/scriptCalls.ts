/**
 * Script calls over a transport that sends a list of commands in one round trip and answers each
 * (the HTTP transport, httpRedis.ts; the light RESP client, lightRedis.ts). A script's first call
 * on the connection goes as EVAL with its source (which runs it and caches it), later calls as
 * EVALSHA; within one batch only the script's first call carries the source. A NOSCRIPT answer
 * sends that call again as EVAL, once. Every call gets its own outcome; a round trip that fails
 * fails each call it carried, as does a command that cannot be built (a script the transport
 * does not have). (The ioredis service, Redis.ts, does the same over ioredis's
 * pipelines, with a Cluster's per-master loading besides.)
 */
import * as Effect from "effect/Effect"
import { type RedisError, redisError } from "./errors.js"
import type { LuaName } from "./lua.generated.js"
import { isLoadingReply, type LoadingWait } from "./loading.js"
import type { BatchReply, ScriptArg, ScriptBatchOptions, ScriptCall } from "./transport.js"

/** One command's answer: its value, or the error Redis answered (a ReplyError). */
export type CommandAnswer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: Error }

export interface ScriptTransport {
  /** Scripts the server has cached for this connection (the transport clears it when the connection is new). */
  readonly loaded: Set<LuaName>
  /** The EVAL (with the source) or EVALSHA command of a call. */
  readonly command: (call: ScriptCall, withSource: boolean) => ReadonlyArray<ScriptArg>
  /** Sends the commands in one round trip; rejects only when the round trip itself failed. */
  readonly roundTrip: (commands: ReadonlyArray<ReadonlyArray<ScriptArg>>) => Promise<ReadonlyArray<CommandAnswer>>
  /** A reply as the callers read it (strings, or bytes when `buffers`). */
  readonly decode: (value: unknown, buffers: boolean) => unknown
  /** Starts a call's wait while the server answers LOADING (loading.ts); without it a LOADING answer fails the call. */
  readonly loadingWait?: () => LoadingWait
}

/** A script call's failure: the error Redis answered, or why the round trip failed. */
export const scriptError = (script: LuaName, err: unknown): RedisError => redisError(`script ${script}`, err)

const failure = (call: ScriptCall, err: unknown): BatchReply => ({ ok: false, error: scriptError(call.script, err) })

/**
 * Sorts one round trip's answers: each reply lands in `replies`, a NOSCRIPT call on the first
 * attempt goes in `again` (to go as EVAL), a LOADING one in `loading`, any other error fails its
 * call. Returns the LOADING answer to wait out, if any.
 */
const sortAnswers = (
  t: ScriptTransport,
  calls: ReadonlyArray<ScriptCall>,
  pending: ReadonlyArray<number>,
  answers: ReadonlyArray<CommandAnswer>,
  first: boolean,
  buffers: boolean,
  replies: Array<BatchReply>,
  again: Array<number>,
  loading: Array<number>
): Error | undefined => {
  let loadingAnswer: Error | undefined
  pending.forEach((i, j) => {
    const call = calls[i]!
    const a = answers[j] ?? { ok: false, error: new Error("no answer for this command in the round trip") }
    if (!a.ok) {
      if (first && a.error.message.startsWith("NOSCRIPT")) again.push(i)
      else if (t.loadingWait !== undefined && isLoadingReply(a.error)) {
        loading.push(i)
        loadingAnswer = a.error
      } else replies[i] = failure(call, a.error)
    } else {
      t.loaded.add(call.script)
      replies[i] = { ok: true, value: t.decode(a.value, call.buffers ?? buffers) }
    }
  })
  return loadingAnswer
}

/** Runs the calls over `t`, each with its own outcome. NOSCRIPT calls go again once (as EVAL); LOADING ones (nothing ran) while the server loads. */
const runCalls = async (
  t: ScriptTransport,
  calls: ReadonlyArray<ScriptCall>,
  buffers: boolean
): Promise<Array<BatchReply>> => {
  const replies: Array<BatchReply> = new Array(calls.length)
  // A call with a SORT read (ScriptCall.sorted) needs a MULTI in one round trip, which this transport has not.
  let pending: Array<number> = []
  calls.forEach((call, i) => {
    if (call.sorted === undefined) pending.push(i)
    else
      replies[i] = failure(call, new Error("this transport cannot read a script's SORT in a MULTI (ScriptCall.sorted)"))
  })
  let wait: LoadingWait | undefined
  for (let attempt = 0; pending.length > 0; attempt++) {
    const sourced = new Set<LuaName>()
    let answers: ReadonlyArray<CommandAnswer>
    try {
      const commands = pending.map((i) => {
        const call = calls[i]!
        const withSource = attempt > 0 || (!t.loaded.has(call.script) && !sourced.has(call.script))
        if (withSource) sourced.add(call.script)
        return t.command(call, withSource)
      })
      answers = await t.roundTrip(commands)
    } catch (err) {
      for (const i of pending) replies[i] = failure(calls[i]!, err)
      return replies
    }
    const again: Array<number> = []
    const loading: Array<number> = []
    const loadingAnswer = sortAnswers(t, calls, pending, answers, attempt === 0, buffers, replies, again, loading)
    if (loadingAnswer !== undefined) {
      try {
        wait ??= t.loadingWait!()
        await wait(loadingAnswer)
        again.push(...loading)
        again.sort((a, b) => a - b)
      } catch (err) {
        for (const i of loading) replies[i] = failure(calls[i]!, err)
      }
    }
    pending = again
  }
  return replies
}

/** The RedisShape members that run scripts, over `t`. */
export const scriptCalls = (t: ScriptTransport) => {
  const runPromise = (
    script: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>,
    buffers: boolean
  ): Promise<unknown> =>
    runCalls(t, [{ script, keys, args }], buffers).then(([r]) => {
      if (r!.ok) return r!.value
      throw r!.error
    })

  const run = (script: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    Effect.flatMap(
      Effect.promise(() => runCalls(t, [{ script, keys, args }], buffers)),
      ([r]) => (r!.ok ? Effect.succeed(r!.value) : Effect.fail(r!.error))
    )

  return {
    script: (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>) =>
      run(name, keys, args, false),
    scriptBuffer: (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>) =>
      run(name, keys, args, true),
    scriptPromise: runPromise,
    scriptBatch: (
      calls: ReadonlyArray<ScriptCall>,
      opts?: ScriptBatchOptions
    ): Effect.Effect<ReadonlyArray<BatchReply>> =>
      calls.length === 0
        ? Effect.sync(() => {
            opts?.onSent?.()
            return []
          })
        : Effect.promise(() => {
            // runCalls builds its request before its first await; the light client writes it once its
            // connection is there, in the order requests came (continuations of one awaited connection).
            const done = runCalls(t, calls, opts?.buffers === true)
            opts?.onSent?.()
            return done
          })
  }
}
