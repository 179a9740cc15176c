/**
 * The direct TaskMessage decoder: the usual message read straight from its bytes, with none of the
 * general reader's per-message objects (a DataView, a [field, wire type] pair per field, a BigInt
 * per int64 field, a closure per decode). A worker decodes one message per task it runs.
 *
 * "The usual message": every field one of TaskMessage's 15 with its own wire type, every number
 * below 2^35 (int32 fields below 2^31), every header entry just a key and a value, strings valid
 * UTF-8. For anything else (an unknown field, a negative number, invalid UTF-8, truncated bytes…)
 * it returns undefined, and the general decoder (TaskMessage.ts) reads the message — or throws the
 * error it would have thrown. Where it decodes, it gives what the general decoder gives (tested on
 * random messages and on damaged ones).
 */
import { keptBytes } from "./byteSlab.js"
import { setEntry } from "./protoFields.js"
import type { TaskMessage } from "./TaskMessage.js"

/** As the general decoder's strict UTF-8: invalid bytes throw, a leading BOM is kept. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The value of the last `varint` read (its return value is the offset after it, or -1). */
let value = 0

/** Reads a varint at `at` (at most 5 bytes, value below 2^35) into `value`; returns the offset after it, or -1. */
const varint = (b: Uint8Array, at: number, len: number): number => {
  let v = 0
  for (let shift = 0; shift < 28; shift += 7) {
    if (at >= len) return -1
    const c = b[at++]!
    v |= (c & 0x7f) << shift
    if (c < 0x80) {
      value = v >>> 0
      return at
    }
  }
  if (at >= len) return -1
  const c = b[at++]!
  if (c >= 0x80) return -1
  value = (v >>> 0) + c * 2 ** 28
  return at
}

/** Longest string read as ASCII by a loop; longer ones go to TextDecoder. */
const shortAscii = 64

/** The string in b[start, stop): UTF-8 text, or undefined when the bytes are not valid UTF-8. */
const text = (b: Uint8Array, start: number, stop: number): string | undefined => {
  if (start === stop) return ""
  if (stop - start > shortAscii) return decodeUtf8(b, start, stop)
  let out = ""
  for (let i = start; i < stop; i++) {
    const c = b[i]!
    if (c > 0x7f) return decodeUtf8(b, start, stop)
    out += String.fromCharCode(c)
  }
  return out
}

const decodeUtf8 = (b: Uint8Array, start: number, stop: number): string | undefined => {
  try {
    return utf8.decode(b.subarray(start, stop))
  } catch {
    return undefined
  }
}

/** Reads a header entry (map<string,string>) in b[at, stop) into `headers`; false when it is not the usual `key, value`. */
const headerEntry = (b: Uint8Array, at: number, stop: number, headers: Record<string, string>): boolean => {
  let key = ""
  let val = ""
  while (at < stop) {
    const tag = b[at++]!
    if (tag !== 0x0a && tag !== 0x12) return false
    at = varint(b, at, stop)
    if (at < 0 || value > stop - at) return false
    const s = text(b, at, at + value)
    if (s === undefined) return false
    if (tag === 0x0a) key = s
    else val = s
    at += value
  }
  setEntry(headers, key, val)
  return true
}

/** The message, or undefined when it is not the usual one (the general decoder then reads it). */
export const decodeTaskMessageDirect = (b: Uint8Array): TaskMessage | undefined => {
  const len = b.length
  let type = ""
  let payload: Uint8Array | undefined
  let id = ""
  let queue = ""
  let retry = 0
  let retried = 0
  let errorMsg = ""
  let timeout = 0
  let deadline = 0
  let uniqueKey = ""
  let lastFailedAt = 0
  let retention = 0
  let completedAt = 0
  let groupKey = ""
  const headers: Record<string, string> = {}
  let at = 0
  while (at < len) {
    const tag = b[at++]!
    const field = tag >>> 3
    if ((tag & 7) === 2) {
      // Length-delimited: a string, the payload, or a header entry.
      at = varint(b, at, len)
      if (at < 0 || value > len - at) return undefined
      const start = at
      const stop = at + value
      at = stop
      if (field === 2) {
        payload = value === 0 ? undefined : keptBytes(b.subarray(start, stop))
        continue
      }
      if (field === 15) {
        if (!headerEntry(b, start, stop, headers)) return undefined
        continue
      }
      const s = text(b, start, stop)
      if (s === undefined) return undefined
      switch (field) {
        case 1:
          type = s
          continue
        case 3:
          id = s
          continue
        case 4:
          queue = s
          continue
        case 7:
          errorMsg = s
          continue
        case 10:
          uniqueKey = s
          continue
        case 14:
          groupKey = s
          continue
      }
      return undefined
    }
    if ((tag & 7) !== 0) return undefined
    at = varint(b, at, len)
    if (at < 0) return undefined
    switch (field) {
      case 5:
        if (value >= 2 ** 31) return undefined
        retry = value
        continue
      case 6:
        if (value >= 2 ** 31) return undefined
        retried = value
        continue
      case 8:
        timeout = value
        continue
      case 9:
        deadline = value
        continue
      case 11:
        lastFailedAt = value
        continue
      case 12:
        retention = value
        continue
      case 13:
        completedAt = value
        continue
    }
    return undefined
  }
  return {
    type,
    payload,
    id,
    queue,
    retry,
    retried,
    errorMsg,
    timeout,
    deadline,
    uniqueKey,
    lastFailedAt,
    retention,
    completedAt,
    groupKey,
    headers
  }
}
