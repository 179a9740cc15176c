/** Reading the inspector scripts' replies (run with buffers): typed values or a RedisError. */
import { Effect } from "effect"
import { RedisError } from "../redis/errors.js"

export const unexpectedReply = (script: string, expected: string) =>
  new RedisError({ op: `script ${script}`, message: `script ${script} replied something other than ${expected}` })

/** A flat array reply. */
export const asArray = (script: string, reply: unknown): Effect.Effect<ReadonlyArray<unknown>, RedisError> =>
  Array.isArray(reply) ? Effect.succeed(reply) : Effect.fail(unexpectedReply(script, "an array"))

/** A bulk string (Buffer or string) as text; null/false as undefined. */
export const text = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : Buffer.isBuffer(v) ? v.toString("utf8") : typeof v === "string" ? v : String(v)

/** A bulk string as bytes; null or empty as undefined. */
export const bytes = (v: unknown): Uint8Array | undefined => {
  if (Buffer.isBuffer(v)) return v.length === 0 ? undefined : new Uint8Array(v.buffer, v.byteOffset, v.length)
  if (typeof v === "string") return v.length === 0 ? undefined : new TextEncoder().encode(v)
  return undefined
}

/** An integer or numeric bulk string; undefined when absent. */
export const num = (v: unknown): number | undefined => {
  if (typeof v === "number") return v
  const t = text(v)
  if (t === undefined || t === "") return undefined
  const n = Number(t)
  return Number.isFinite(n) ? n : undefined
}

/** `{code, state}` replies of the per-task scripts. */
export const asCodeAndState = (script: string, reply: unknown): Effect.Effect<{ code: number; state: string }, RedisError> =>
  Array.isArray(reply) && reply.length === 2 && typeof reply[0] === "number"
    ? Effect.succeed({ code: reply[0], state: text(reply[1]) ?? "" })
    : Effect.fail(unexpectedReply(script, "{code, state}"))

/** An array of integers of the given length. */
export const asInts = (script: string, reply: unknown, length: number): Effect.Effect<ReadonlyArray<number>, RedisError> =>
  Array.isArray(reply) && reply.length === length && reply.every((x) => typeof x === "number")
    ? Effect.succeed(reply as Array<number>)
    : Effect.fail(unexpectedReply(script, `${length} integers`))
