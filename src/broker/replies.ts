/**
 * Decoding helpers for script replies (shared by the src/broker/ functions): Redis replies are
 * `unknown` to the script runner; these turn them into typed values or a RedisError that names
 * the script and what came back.
 */
import { Effect } from "effect"
import { RedisError } from "../redis/errors.js"

const unexpected = (script: string, reply: unknown, expected: string) =>
  new RedisError({
    op: `script ${script}`,
    message: `script ${script} replied ${describe(reply)}, expected ${expected}; is the Redis server running a different script under the same SHA?`
  })

const describe = (v: unknown): string => {
  if (Buffer.isBuffer(v)) return `${v.length} bytes`
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/** An integer reply. */
export const asInteger = (script: string, reply: unknown): Effect.Effect<number, RedisError> =>
  typeof reply === "number" && Number.isInteger(reply) ? Effect.succeed(reply) : Effect.fail(unexpected(script, reply, "an integer"))

/** An array reply of integers. */
export const asIntegers = (script: string, reply: unknown, length: number): Effect.Effect<ReadonlyArray<number>, RedisError> =>
  Array.isArray(reply) && reply.length === length && reply.every((x) => typeof x === "number")
    ? Effect.succeed(reply as Array<number>)
    : Effect.fail(unexpected(script, reply, `an array of ${length} integers`))

/** An array reply of strings (or Buffers, read as UTF-8). */
export const asStrings = (script: string, reply: unknown): Effect.Effect<ReadonlyArray<string>, RedisError> =>
  Array.isArray(reply) && reply.every((x) => typeof x === "string" || Buffer.isBuffer(x))
    ? Effect.succeed(reply.map((x: string | Buffer) => (typeof x === "string" ? x : x.toString("utf8"))))
    : Effect.fail(unexpected(script, reply, "an array of strings"))

/** One `id, msg` pair of a flat reply; `msg` undefined when the task hash had no msg. */
export interface IdAndBytes {
  readonly id: string
  readonly bytes: Uint8Array | undefined
}

/** A flat `id1, msg1, id2, msg2, …` array reply read with buffers (msg nil allowed). */
export const asIdBytesPairs = (script: string, reply: unknown, from = 0): Effect.Effect<ReadonlyArray<IdAndBytes>, RedisError> => {
  if (!Array.isArray(reply) || (reply.length - from) % 2 !== 0) return Effect.fail(unexpected(script, reply, "a flat array of id, msg pairs"))
  const out: Array<IdAndBytes> = []
  for (let i = from; i < reply.length; i += 2) {
    const id: unknown = reply[i]
    const msg: unknown = reply[i + 1]
    if (!Buffer.isBuffer(id) && typeof id !== "string") return Effect.fail(unexpected(script, reply, "a flat array of id, msg pairs"))
    if (msg !== null && !Buffer.isBuffer(msg)) return Effect.fail(unexpected(script, reply, "a flat array of id, msg pairs"))
    out.push({ id: id.toString(), bytes: msg === null ? undefined : new Uint8Array(msg.buffer, msg.byteOffset, msg.length) })
  }
  return Effect.succeed(out)
}
