import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { MessageDecodeError } from "./errors.js"
import { slabBytes } from "./byteSlab.js"
import { decodeTaskMessageDirect } from "./taskMessageDirectDecode.js"
import {
  decodeWith,
  type Mutable,
  readBytes,
  readInt64,
  readMapEntry,
  setEntry,
  readString,
  toInt64,
  writeBytes,
  writeInt32,
  writeInt64,
  writeString,
  writeStringMap
} from "./protoFields.js"

export { MessageDecodeError }

/**
 * asynq's TaskMessage (asynq.proto), field for field. int64 fields are JS numbers: asynq stores
 * unix seconds and second counts, far inside ±2^53; values outside that range lose precision.
 */
export interface TaskMessage {
  /** 1 */ readonly type: string
  /** 2: `undefined` is Go's nil payload (absent on the wire). */ readonly payload: Uint8Array | undefined
  /** 3 */ readonly id: string
  /** 4 */ readonly queue: string
  /** 5: max retry count */ readonly retry: number
  /** 6 */ readonly retried: number
  /** 7 */ readonly errorMsg: string
  /** 8: seconds, 0 = none */ readonly timeout: number
  /** 9: unix seconds, 0 = none */ readonly deadline: number
  /** 10 */ readonly uniqueKey: string
  /** 11: unix seconds */ readonly lastFailedAt: number
  /** 12: seconds */ readonly retention: number
  /** 13: unix seconds */ readonly completedAt: number
  /** 14 */ readonly groupKey: string
  /** 15 */ readonly headers: Readonly<Record<string, string>>
}

/** A TaskMessage with every field at its zero value (as Go's zero struct). */
export const emptyTaskMessage: TaskMessage = {
  type: "",
  payload: undefined,
  id: "",
  queue: "",
  retry: 0,
  retried: 0,
  errorMsg: "",
  timeout: 0,
  deadline: 0,
  uniqueKey: "",
  lastFailedAt: 0,
  retention: 0,
  completedAt: 0,
  groupKey: "",
  headers: {}
}

/**
 * Encodes a TaskMessage as Go's proto.Marshal does: fields in number order, defaults omitted,
 * headers sorted by key. The usual message (every number a whole number in the range a varint of
 * at most 32 bits holds) is written straight into one exactly sized array (the size computed
 * first); any other goes through @bufbuild/protobuf's BinaryWriter (one reused writer: encoding is
 * synchronous; `finish()` copies the bytes out and resets it). Both write the same bytes.
 */
const writer = new BinaryWriter()
/** Encodes a TaskMessage as asynq's protobuf bytes. */
export const encodeTaskMessage = (m: TaskMessage): Uint8Array => {
  const fast = encodeCommon(m)
  if (fast !== undefined) return fast
  try {
    return writeTaskMessage(writer, m)
  } catch (e) {
    writer.finish() // drop the partial message, so the next encode starts clean
    throw e
  }
}

const u32Max = 0xffffffff
const i32Max = 0x7fffffff
/** Whether `v` is written by the direct encoder: a whole number from 0 to `max`. */
const plain = (v: number, max: number): boolean => v >= 0 && v <= max && Number.isInteger(v)

/** Bytes of a varint of `v` (0 <= v < 2^32). */
const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5)

/** Bytes of `s` as UTF-8 (a lone surrogate as U+FFFD, 3 bytes, as TextEncoder writes it). */
const utf8Length = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2 // a surrogate pair: 2 code units, 4 bytes
      i++
    } else n += 2
  }
  return n
}

const utf8 = new TextEncoder()

/** Writes `v` (0 <= v < 2^32) as a varint at `at`; returns the offset after it. */
const putVarint = (out: Uint8Array, at: number, v: number): number => {
  while (v > 0x7f) {
    out[at++] = (v & 0x7f) | 0x80
    v = v >>> 7
  }
  out[at++] = v
  return at
}

/** Writes `s` (`n` = its UTF-8 length) at `at`; returns the offset after it. */
const putString = (out: Uint8Array, at: number, s: string, n: number): number => {
  if (n === s.length) {
    for (let i = 0; i < n; i++) out[at + i] = s.charCodeAt(i)
  } else utf8.encodeInto(s, out.subarray(at, at + n))
  return at + n
}

/** Size of a length-delimited field with a `len`-byte body (1-byte tag: fields 1 to 15). */
const delimited = (len: number): number => 1 + varintSize(len) + len

/** A message's bytes with its payload in them (`encodeTaskMessageWithText`). */
export interface EncodedWithText {
  /** The message's protobuf bytes. */
  readonly bytes: Uint8Array
  /** The payload's bytes: a view into `bytes`. */
  readonly payload: Uint8Array
}

/**
 * The bytes of `m` with the UTF-8 of `text` as its payload (`m.payload` is ignored), the text
 * encoded straight into the message's bytes: no array of its own first, and with TextEncoder's
 * `encodeInto` (TextEncoder's `encode` measures the text first and writes it more slowly).
 * For an ASCII text only (one byte per character, the usual JSON): undefined for any other text,
 * and for a message the direct encoder leaves to BinaryWriter; the caller then encodes the text
 * and the message as usual. The same bytes as `encodeTaskMessage` with the text's UTF-8 as payload.
 */
export const encodeTaskMessageWithText = (m: TaskMessage, text: string): EncodedWithText | undefined => {
  if (text.length === 0) return undefined
  const bytes = encodeCommon(m, text)
  return bytes === undefined ? undefined : { bytes, payload: textPayload }
}

/** Where `encodeCommon` wrote a text payload (read at once by `encodeTaskMessageWithText`). */
let textPayload: Uint8Array = new Uint8Array(0)

/**
 * The direct encoder (see encodeTaskMessage); undefined for a message it leaves to BinaryWriter.
 * With `text`, the payload is that text's UTF-8 (in place of `m.payload`), when it is ASCII
 * (undefined otherwise), and `textPayload` is set to its bytes.
 */
const encodeCommon = (m: TaskMessage, text?: string): Uint8Array | undefined => {
  if (!plain(m.retry, i32Max) || !plain(m.retried, i32Max)) return undefined
  if (!plain(m.timeout, u32Max) || !plain(m.deadline, u32Max) || !plain(m.lastFailedAt, u32Max)) return undefined
  if (!plain(m.retention, u32Max) || !plain(m.completedAt, u32Max)) return undefined
  if (typeof m.type !== "string" || typeof m.id !== "string" || typeof m.queue !== "string") return undefined
  if (typeof m.errorMsg !== "string" || typeof m.uniqueKey !== "string" || typeof m.groupKey !== "string")
    return undefined
  const type = utf8Length(m.type)
  const id = utf8Length(m.id)
  const queue = utf8Length(m.queue)
  const errorMsg = utf8Length(m.errorMsg)
  const uniqueKey = utf8Length(m.uniqueKey)
  const groupKey = utf8Length(m.groupKey)
  // A text payload is taken to be ASCII (as many bytes as characters): checked as it is written.
  const payload = text !== undefined ? text.length : m.payload === undefined ? 0 : m.payload.length
  let size = 0
  if (type > 0) size += delimited(type)
  if (payload > 0) size += delimited(payload)
  if (id > 0) size += delimited(id)
  if (queue > 0) size += delimited(queue)
  if (m.retry !== 0) size += 1 + varintSize(m.retry)
  if (m.retried !== 0) size += 1 + varintSize(m.retried)
  if (errorMsg > 0) size += delimited(errorMsg)
  if (m.timeout !== 0) size += 1 + varintSize(m.timeout)
  if (m.deadline !== 0) size += 1 + varintSize(m.deadline)
  if (uniqueKey > 0) size += delimited(uniqueKey)
  if (m.lastFailedAt !== 0) size += 1 + varintSize(m.lastFailedAt)
  if (m.retention !== 0) size += 1 + varintSize(m.retention)
  if (m.completedAt !== 0) size += 1 + varintSize(m.completedAt)
  if (groupKey > 0) size += delimited(groupKey)
  // Headers: one entry per key, in key order, both parts always written.
  let headerKeys: Array<string> | undefined
  let headerSizes: Array<number> | undefined
  for (const k in m.headers) {
    if (!Object.hasOwn(m.headers, k)) continue
    headerKeys ??= []
    headerKeys.push(k)
  }
  if (headerKeys !== undefined) {
    headerKeys.sort()
    headerSizes = new Array(headerKeys.length * 2)
    for (let i = 0; i < headerKeys.length; i++) {
      const value = m.headers[headerKeys[i]!]
      if (typeof value !== "string") return undefined
      const k = utf8Length(headerKeys[i]!)
      const v = utf8Length(value)
      headerSizes[2 * i] = k
      headerSizes[2 * i + 1] = v
      size += delimited(delimited(k) + delimited(v))
    }
  }
  const out = slabBytes(size)
  let at = 0
  if (type > 0) at = putString(out, putVarint(out, ((out[at] = 0x0a), at + 1), type), m.type, type)
  if (payload > 0) {
    out[at] = 0x12
    at = putVarint(out, at + 1, payload)
    if (text !== undefined) {
      const view = out.subarray(at, at + payload)
      const r = utf8.encodeInto(text, view)
      // Not ASCII: some character took more than one byte, so the text did not fit.
      if (r.read !== text.length || r.written !== payload) return undefined
      textPayload = view
    } else out.set(m.payload!, at)
    at += payload
  }
  if (id > 0) at = putString(out, putVarint(out, ((out[at] = 0x1a), at + 1), id), m.id, id)
  if (queue > 0) at = putString(out, putVarint(out, ((out[at] = 0x22), at + 1), queue), m.queue, queue)
  if (m.retry !== 0) at = putVarint(out, ((out[at] = 0x28), at + 1), m.retry)
  if (m.retried !== 0) at = putVarint(out, ((out[at] = 0x30), at + 1), m.retried)
  if (errorMsg > 0) at = putString(out, putVarint(out, ((out[at] = 0x3a), at + 1), errorMsg), m.errorMsg, errorMsg)
  if (m.timeout !== 0) at = putVarint(out, ((out[at] = 0x40), at + 1), m.timeout)
  if (m.deadline !== 0) at = putVarint(out, ((out[at] = 0x48), at + 1), m.deadline)
  if (uniqueKey > 0) at = putString(out, putVarint(out, ((out[at] = 0x52), at + 1), uniqueKey), m.uniqueKey, uniqueKey)
  if (m.lastFailedAt !== 0) at = putVarint(out, ((out[at] = 0x58), at + 1), m.lastFailedAt)
  if (m.retention !== 0) at = putVarint(out, ((out[at] = 0x60), at + 1), m.retention)
  if (m.completedAt !== 0) at = putVarint(out, ((out[at] = 0x68), at + 1), m.completedAt)
  if (groupKey > 0) at = putString(out, putVarint(out, ((out[at] = 0x72), at + 1), groupKey), m.groupKey, groupKey)
  if (headerKeys !== undefined) {
    for (let i = 0; i < headerKeys.length; i++) {
      const key = headerKeys[i]!
      const k = headerSizes![2 * i]!
      const v = headerSizes![2 * i + 1]!
      out[at] = 0x7a
      at = putVarint(out, at + 1, delimited(k) + delimited(v))
      out[at] = 0x0a
      at = putString(out, putVarint(out, at + 1, k), key, k)
      out[at] = 0x12
      at = putString(out, putVarint(out, at + 1, v), m.headers[key]!, v)
    }
  }
  if (at !== size) throw new Error(`TaskMessage encoder wrote ${at} bytes, expected ${size}`)
  return out
}

/** The general path of `encodeTaskMessage` alone (a fresh BinaryWriter): what the direct encoder must match byte for byte. */
export const encodeTaskMessageWithWriter = (m: TaskMessage): Uint8Array => writeTaskMessage(new BinaryWriter(), m)

const writeTaskMessage = (w: BinaryWriter, m: TaskMessage): Uint8Array => {
  writeString(w, 1, m.type)
  writeBytes(w, 2, m.payload)
  writeString(w, 3, m.id)
  writeString(w, 4, m.queue)
  writeInt32(w, 5, m.retry)
  writeInt32(w, 6, m.retried)
  writeString(w, 7, m.errorMsg)
  writeInt64(w, 8, m.timeout)
  writeInt64(w, 9, m.deadline)
  writeString(w, 10, m.uniqueKey)
  writeInt64(w, 11, m.lastFailedAt)
  writeInt64(w, 12, m.retention)
  writeInt64(w, 13, m.completedAt)
  writeString(w, 14, m.groupKey)
  writeStringMap(w, 15, m.headers)
  return w.finish()
}

/**
 * Decodes a TaskMessage as Go's proto.Unmarshal does: any field order, unknown fields (and known
 * numbers with an unexpected wire type) skipped, a repeated scalar's last value wins, duplicate
 * header keys keep the last. Throws MessageDecodeError (wrap with Effect.try). The usual message
 * is read by the direct decoder (taskMessageDirectDecode.ts); any other, and every damaged one, by
 * @bufbuild/protobuf's BinaryReader. Both give the same message.
 */
export const decodeTaskMessage = (bytes: Uint8Array, key?: string): TaskMessage =>
  decodeTaskMessageDirect(bytes) ?? decodeTaskMessageWithReader(bytes, key)

/** The general path of `decodeTaskMessage` alone (@bufbuild/protobuf's BinaryReader): what the direct decoder must agree with. */
export const decodeTaskMessageWithReader = (bytes: Uint8Array, key?: string): TaskMessage =>
  decodeWith("TaskMessage", bytes, key, (r) => {
    const m: Mutable<TaskMessage> = { ...emptyTaskMessage }
    const headers: Record<string, string> = {}
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1:
            m.type = readString(r)
            continue
          case 2:
            m.payload = readBytes(r)
            continue
          case 3:
            m.id = readString(r)
            continue
          case 4:
            m.queue = readString(r)
            continue
          case 7:
            m.errorMsg = readString(r)
            continue
          case 10:
            m.uniqueKey = readString(r)
            continue
          case 14:
            m.groupKey = readString(r)
            continue
          case 15: {
            const [k, v] = readMapEntry(r, readString, "")
            setEntry(headers, k, v)
            continue
          }
        }
      } else if (wt === WireType.Varint) {
        switch (no) {
          case 5:
            m.retry = r.int32()
            continue
          case 6:
            m.retried = r.int32()
            continue
          case 8:
            m.timeout = readInt64(r)
            continue
          case 9:
            m.deadline = readInt64(r)
            continue
          case 11:
            m.lastFailedAt = readInt64(r)
            continue
          case 12:
            m.retention = readInt64(r)
            continue
          case 13:
            m.completedAt = readInt64(r)
            continue
        }
      }
      r.skip(wt, no)
    }
    m.headers = headers
    return m
  })
