/**
 * Task payloads: asynq carries a payload as opaque bytes (`TaskMessage.payload`). These helpers
 * turn JS values into those bytes and back. A `Uint8Array` (or Buffer) is sent as is, a string as
 * its UTF-8 bytes, `undefined` as no payload (Go's nil), anything else as JSON text.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { slabUtf8 } from "./byteSlab.js"

/** A payload value that has no byte form (a function, a symbol, a BigInt, a cycle…). */
export class PayloadEncodeError extends Data.TaggedError("PayloadEncodeError")<{ readonly message: string }> {}

/** Payload bytes that are not the JSON (or UTF-8 text) the reader expected. */
export class PayloadDecodeError extends Data.TaggedError("PayloadDecodeError")<{ readonly message: string }> {}

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** The UTF-8 bytes of a string (lone surrogates as U+FFFD, as TextEncoder writes them); a short one in a shared slab (byteSlab.ts). */
const utf8Bytes = (s: string): Uint8Array => slabUtf8(s) ?? utf8Encoder.encode(s)

/**
 * The payload of a value before its UTF-8 encoding: bytes as `encodePayload` gives them, or the
 * text whose UTF-8 bytes are the payload (a string as is, any other value as its JSON). Lets a
 * caller encode a long text straight into the message's bytes (TaskMessage.ts
 * `encodeTaskMessageWithText`) instead of into an array of its own first. Throws as `encodePayload`.
 */
export const payloadSource = (p: unknown): Uint8Array | string | undefined => {
  if (p === undefined) return undefined
  if (p instanceof Uint8Array) return p
  if (typeof p === "string") return p
  if (ArrayBuffer.isView(p)) return new Uint8Array(p.buffer, p.byteOffset, p.byteLength)
  if (p instanceof ArrayBuffer) return new Uint8Array(p)
  let text: string | undefined
  try {
    text = JSON.stringify(p)
  } catch (e) {
    throw new PayloadEncodeError({
      message: `payload cannot be serialized as JSON: ${e instanceof Error ? e.message : String(e)}`
    })
  }
  if (text === undefined) {
    throw new PayloadEncodeError({
      message: `payload of type ${typeof p} has no JSON form; pass a string, a Uint8Array or a JSON value`
    })
  }
  return text
}

/**
 * The payload bytes for a value: Uint8Array as is, other typed arrays / ArrayBuffer by their bytes,
 * string → UTF-8, `undefined` → no payload, anything else → `JSON.stringify`.
 * Throws PayloadEncodeError when the value has no JSON form (rather than silently sending nothing).
 */
export const encodePayload = (p: unknown): Uint8Array | undefined => {
  const source = payloadSource(p)
  return typeof source === "string" ? utf8Bytes(source) : source
}

/** The UTF-8 bytes of a payload text (as `encodePayload` encodes a string). */
export const payloadTextBytes = (text: string): Uint8Array => utf8Bytes(text)

/** The payload as UTF-8 text ("" when there is none). Throws PayloadDecodeError on invalid UTF-8. */
export const payloadText = (p: Uint8Array | undefined): string => {
  if (p === undefined || p.length === 0) return ""
  try {
    return utf8Decoder.decode(p)
  } catch {
    throw new PayloadDecodeError({ message: `payload (${p.length} bytes) is not valid UTF-8 text` })
  }
}

/**
 * The payload parsed as JSON; `undefined` when there is none (the inverse of encodePayload for
 * JSON values). Throws PayloadDecodeError when the bytes are not JSON.
 */
export const payloadJson = <A = unknown>(p: Uint8Array | undefined): A => {
  if (p === undefined || p.length === 0) return undefined as A
  const text = payloadText(p)
  try {
    return JSON.parse(text) as A
  } catch (e) {
    const head = text.length > 40 ? `${text.slice(0, 40)}…` : text
    throw new PayloadDecodeError({
      message: `payload is not valid JSON (${e instanceof Error ? e.message : String(e)}): ${JSON.stringify(head)}`
    })
  }
}

/** `payloadJson` as an Effect: the parsed JSON, or a PayloadDecodeError. */
export const decodePayload = <A = unknown>(p: Uint8Array | undefined): Effect.Effect<A, PayloadDecodeError> =>
  Effect.try({
    try: () => payloadJson<A>(p),
    catch: (e) => (e instanceof PayloadDecodeError ? e : new PayloadDecodeError({ message: String(e) }))
  })
