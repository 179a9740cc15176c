/**
 * Script descriptors: one value per Lua script saying how a typed input becomes its KEYS and ARGV,
 * whether its bulk replies are read as Buffers, and how its reply becomes a typed result or a
 * tagged error. Every broker operation runs its scripts through `runScript` (one call) or
 * `runScripts` (many calls, one round trip per cluster slot; see `RedisShape.scriptBatch`), so no
 * caller ever reads a raw reply. Each descriptor carries its script's embedded source (one constant
 * of src/redis/lua.generated.ts), so a bundle holds only the scripts its descriptors use.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptArg, ScriptCall } from "../redis/Redis.js"
import { type LuaName, registerLua } from "../redis/scripts.js"
import { Broker } from "./Broker.js"

export interface ScriptDef<I, A, E> {
  /** The script `lua/<name>.lua`. */
  readonly name: LuaName
  /** Its embedded source: the `<name>Lua` constant of src/redis/lua.generated.ts. */
  readonly source: string
  /** Read bulk replies as Buffers (protobuf payloads) rather than strings. */
  readonly buffers: boolean
  readonly keys: (input: I) => ReadonlyArray<string>
  readonly args: (input: I) => ReadonlyArray<ScriptArg>
  /** The reply as the operation's result, or its error (a RedisError for a reply of the wrong shape). */
  readonly decode: (reply: unknown, input: I) => Result.Result<A, E | RedisError>
}

/**
 * A script descriptor. `E` is the script's tagged errors (from its reply codes, see replyCodes.ts).
 * Registers the script's source, so the Redis service can run it by name.
 */
export const defineScript = <I, A, E = never>(def: ScriptDef<I, A, E>): ScriptDef<I, A, E> => {
  registerLua(def.name, def.source)
  return def
}

/** A descriptor with its input: the call to send and how to read its reply. */
export interface BoundScript<A, E> {
  readonly call: ScriptCall
  decode(reply: unknown): Result.Result<A, E | RedisError>
}

/** A bound call; `decode` is a method, so binding allocates no closure (it runs once per task on the hot paths). */
class Bound<I, A, E> implements BoundScript<A, E> {
  readonly call: ScriptCall
  constructor(
    readonly def: ScriptDef<I, A, E>,
    readonly input: I
  ) {
    this.call = { script: def.name, keys: def.keys(input), args: def.args(input), buffers: def.buffers }
  }
  decode(reply: unknown): Result.Result<A, E | RedisError> {
    return this.def.decode(reply, this.input)
  }
}

/** Binds a descriptor to one input. */
export const bindScript = <I, A, E>(def: ScriptDef<I, A, E>, input: I): BoundScript<A, E> => new Bound(def, input)

/** A batch reply (or undefined: none came) read by a bound script. */
export const landReply = <A, E>(bound: BoundScript<A, E>, reply: BatchReply): Result.Result<A, E | RedisError> =>
  reply.ok ? bound.decode(reply.value) : Result.fail(reply.error)

/** Runs one script call (a plain EVALSHA) and decodes its reply. */
export const runScript = <I, A, E>(def: ScriptDef<I, A, E>, input: I): Effect.Effect<A, E | RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) => {
    const keys = def.keys(input)
    const args = def.args(input)
    const reply = def.buffers ? redis.scriptBuffer(def.name, keys, args) : redis.script(def.name, keys, args)
    return Effect.flatMap(reply, (r) => Effect.fromResult(def.decode(r, input)))
  })

/**
 * `runScripts`, with raw `extra` calls of other steps riding along in the same batch (their replies
 * come back undecoded, in order, for the step that made them).
 */
export const runScriptsAlong = <A, E>(
  bound: ReadonlyArray<BoundScript<A, E>>,
  extra: ReadonlyArray<ScriptCall>,
  /** Called once the calls are handed to the connection (see `ScriptBatchOptions.onSent`). */
  onSent?: () => void
) =>
  Effect.flatMap(Broker, ({ redis }) => {
    const calls = bound.map((b) => b.call)
    for (const c of extra) calls.push(c)
    return Effect.map(redis.scriptBatch(calls, onSent ? { onSent } : undefined), (replies) => ({
      outcomes: bound.map((b, i) => landReply(b, replies[i]!)) as ReadonlyArray<Result.Result<A, E | RedisError>>,
      extra: replies.slice(bound.length) as ReadonlyArray<BatchReply>
    }))
  })

type Outcomes<T extends ReadonlyArray<BoundScript<any, any>>> = {
  readonly [K in keyof T]: T[K] extends BoundScript<infer A, infer E> ? Result.Result<A, E | RedisError> : never
}

/**
 * Runs many bound scripts in as few round trips as the deployment allows (one pipeline on a single
 * node; one per slot on a cluster, all at once). Every call gets its own outcome, in order; never
 * fails as a whole.
 */
export const runScripts = <const T extends ReadonlyArray<BoundScript<any, any>>>(
  bound: T
): Effect.Effect<Outcomes<T>, never, Broker> =>
  Effect.flatMap(Broker, ({ redis }) =>
    Effect.map(
      redis.scriptBatch(bound.map((b) => b.call)),
      (replies) => bound.map((b, i) => landReply(b, replies[i]!)) as unknown as Outcomes<T>
    )
  )
