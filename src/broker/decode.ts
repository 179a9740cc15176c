/**
 * Reading script replies inside descriptors' decoders (sync, no Effect): a typed value or a
 * RedisError that names the script and what came back.
 */
import * as Result from "effect/Result"
import { RedisError } from "../redis/errors.js"
import type { LuaName } from "../redis/lua.generated.js"
import { utf8Text } from "./fields.js"
import { type CodeContext, type CodeError, type CodedScript, codeError, replyCodes } from "./replyCodes.js"

const describe = (v: unknown): string => {
  if (v instanceof Uint8Array) return `${v.length} bytes`
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/** The error of a reply that is not what the script returns. */
export const unexpectedReply = (script: LuaName, reply: unknown, expected: string) =>
  new RedisError({
    op: `script ${script}`,
    message: `script ${script} replied ${describe(reply)}, expected ${expected}; is the Redis server running a different script under the same SHA?`
  })

/** An integer reply. */
export const integerReply = (script: LuaName, reply: unknown): Result.Result<number, RedisError> =>
  typeof reply === "number" && Number.isInteger(reply)
    ? Result.succeed(reply)
    : Result.fail(unexpectedReply(script, reply, "an integer"))

/** An array reply of `length` integers. */
export const integersReply = (
  script: LuaName,
  reply: unknown,
  length: number
): Result.Result<ReadonlyArray<number>, RedisError> =>
  Array.isArray(reply) && reply.length === length && reply.every((x) => typeof x === "number")
    ? Result.succeed(reply as Array<number>)
    : Result.fail(unexpectedReply(script, reply, `an array of ${length} integers`))

/** An array reply of strings (or Buffers, read as UTF-8). */
export const stringsReply = (script: LuaName, reply: unknown): Result.Result<ReadonlyArray<string>, RedisError> =>
  Array.isArray(reply) && reply.every((x) => typeof x === "string" || x instanceof Uint8Array)
    ? Result.succeed(reply.map((x: string | Uint8Array) => (typeof x === "string" ? x : utf8Text(x))))
    : Result.fail(unexpectedReply(script, reply, "an array of strings"))

/** An array reply (of anything). */
export const arrayReply = (script: LuaName, reply: unknown): Result.Result<ReadonlyArray<unknown>, RedisError> =>
  Array.isArray(reply) ? Result.succeed(reply) : Result.fail(unexpectedReply(script, reply, "an array"))

/** One `id, msg` pair of a flat reply; `msg` undefined when the task hash had no msg. */
export interface IdAndBytes {
  readonly id: string
  readonly bytes: Uint8Array | undefined
}

/** A flat `id1, msg1, id2, msg2, …` array reply read with buffers (msg nil allowed), from index `from`. */
export const idBytesPairsReply = (
  script: LuaName,
  reply: unknown,
  from = 0
): Result.Result<ReadonlyArray<IdAndBytes>, RedisError> => {
  if (!Array.isArray(reply) || (reply.length - from) % 2 !== 0)
    return Result.fail(unexpectedReply(script, reply, "a flat array of id, msg pairs"))
  const out: Array<IdAndBytes> = []
  for (let i = from; i < reply.length; i += 2) {
    const id: unknown = reply[i]
    const msg: unknown = reply[i + 1]
    if (!(id instanceof Uint8Array) && typeof id !== "string")
      return Result.fail(unexpectedReply(script, reply, "a flat array of id, msg pairs"))
    if (msg !== null && !(msg instanceof Uint8Array))
      return Result.fail(unexpectedReply(script, reply, "a flat array of id, msg pairs"))
    out.push({
      id: typeof id === "string" ? id : utf8Text(id),
      bytes: msg === null ? undefined : new Uint8Array(msg.buffer, msg.byteOffset, msg.length)
    })
  }
  return Result.succeed(out)
}

/**
 * A coded reply: the error `code` stands for in the reply-code table, or the code itself when it
 * is one of the script's `successCodes` (else a RedisError naming what was expected).
 */
export const coded = <S extends CodedScript & LuaName>(
  script: S,
  code: number,
  ctx: CodeContext<S>,
  successCodes: ReadonlyArray<number>
): Result.Result<number, CodeError<S> | RedisError> => {
  if (successCodes.includes(code)) return Result.succeed(code)
  const error = codeError(script, code, ctx)
  return error !== undefined
    ? Result.fail(error)
    : Result.fail(unexpectedReply(script, code, `one of ${[...successCodes, ...codesOf(script)].join(", ")}`))
}

const doneOnly: ReadonlyArray<number> = [1]

/**
 * A reply where 1 means the transition was done: `value` (checked first, with no allocation: the
 * hot scripts answer 1), else the script's coded error (replyCodes.ts) or an unexpected-reply error.
 */
export const doneOr = <S extends CodedScript & LuaName, A>(
  script: S,
  reply: unknown,
  ctx: CodeContext<S>,
  value: A,
  successCodes: ReadonlyArray<number> = doneOnly
): Result.Result<A, CodeError<S> | RedisError> =>
  reply === 1
    ? Result.succeed(value)
    : Result.flatMap(integerReply(script, reply), (n) => Result.map(coded(script, n, ctx, successCodes), () => value))

/**
 * The success codes of the lease transitions (complete, retry, archive, requeue): 1 done, 2 already done by
 * this same call — a resend after a lost reply found its own earlier effect (see lua/complete.lua).
 */
export const doneOrAlreadyDone: ReadonlyArray<number> = [1, 2]

const codesOf = (script: CodedScript): ReadonlyArray<string> => Object.keys(replyCodes[script])
