import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { MessageDecodeError } from "./errors.js"
import {
  decodeWith,
  type Mutable,
  readBytes,
  readInt64,
  readMapEntry,
  readString,
  toInt64,
  writeBytes,
  writeInt32,
  writeInt64,
  writeString,
  writeStringMap
} from "./protoFields.js"

export { MessageDecodeError, readMapEntry, toInt64, writeStringMap }

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
 * Encodes a TaskMessage as Go's proto.Marshal does (fields in number order, defaults omitted,
 * headers sorted by key). The usual message (non-negative whole-number counts and times) is
 * written in one pass into one exactly-sized buffer; anything else goes through BinaryWriter,
 * which produces the same bytes (and the same errors for values that are not int32).
 */
export const encodeTaskMessage = (m: TaskMessage): Uint8Array =>
  isPlain(m.retry, int32Max) && isPlain(m.retried, int32Max) && isPlain(m.timeout, int53Max) && isPlain(m.deadline, int53Max) &&
  isPlain(m.lastFailedAt, int53Max) && isPlain(m.retention, int53Max) && isPlain(m.completedAt, int53Max)
    ? encodeFast(m)
    : encodeWithWriter(m)

const int32Max = 2 ** 31 - 1
const int53Max = Number.MAX_SAFE_INTEGER
const isPlain = (v: number, max: number): boolean => Number.isInteger(v) && v >= 0 && v <= max

/** Bytes of a varint for a whole number in [0, 2^53). */
const varintSize = (v: number): number => {
  let n = 1
  while (v >= 128) {
    v = Math.floor(v / 128)
    n++
  }
  return n
}
const putVarint = (buf: Buffer, pos: number, v: number): number => {
  while (v >= 128) {
    buf[pos++] = (v % 128) | 0x80
    v = Math.floor(v / 128)
  }
  buf[pos++] = v
  return pos
}

// Field tags (field number << 3 | wire type), all one byte.
const LD = 2
const tag = (no: number, wt: number) => (no << 3) | wt

/** Size of a length-delimited field with a payload of `len` bytes (tag + length + payload). */
const ldSize = (len: number) => 1 + varintSize(len) + len
/** Size of a varint field, 0 when it is the default. */
const vSize = (v: number) => (v === 0 ? 0 : 1 + varintSize(v))

/** A string field (omitted when empty) at `pos`; returns the position after it. */
const putStr = (buf: Buffer, pos: number, no: number, v: string, len: number): number => {
  if (len === 0) return pos
  buf[pos++] = tag(no, LD)
  pos = putVarint(buf, pos, len)
  return pos + buf.write(v, pos, len, "utf8")
}
/** A varint field (omitted when 0) at `pos`; returns the position after it. */
const putNum = (buf: Buffer, pos: number, no: number, v: number): number => {
  if (v === 0) return pos
  buf[pos++] = tag(no, 0)
  return putVarint(buf, pos, v)
}

const encodeFast = (m: TaskMessage): Uint8Array => {
  const typeLen = Buffer.byteLength(m.type)
  const idLen = Buffer.byteLength(m.id)
  const queueLen = Buffer.byteLength(m.queue)
  const errLen = m.errorMsg === "" ? 0 : Buffer.byteLength(m.errorMsg)
  const uniqueLen = m.uniqueKey === "" ? 0 : Buffer.byteLength(m.uniqueKey)
  const groupLen = m.groupKey === "" ? 0 : Buffer.byteLength(m.groupKey)
  const payloadLen = m.payload === undefined ? 0 : m.payload.length
  const headerKeys = Object.keys(m.headers)
  let headersSize = 0
  const entryLens: Array<number> = []
  if (headerKeys.length > 0) {
    headerKeys.sort()
    for (const k of headerKeys) {
      const entry = ldSize(Buffer.byteLength(k)) + ldSize(Buffer.byteLength(m.headers[k]!))
      entryLens.push(entry)
      headersSize += ldSize(entry)
    }
  }
  const size =
    (typeLen > 0 ? ldSize(typeLen) : 0) + (payloadLen > 0 ? ldSize(payloadLen) : 0) + (idLen > 0 ? ldSize(idLen) : 0) +
    (queueLen > 0 ? ldSize(queueLen) : 0) + vSize(m.retry) + vSize(m.retried) + (errLen > 0 ? ldSize(errLen) : 0) +
    vSize(m.timeout) + vSize(m.deadline) + (uniqueLen > 0 ? ldSize(uniqueLen) : 0) + vSize(m.lastFailedAt) +
    vSize(m.retention) + vSize(m.completedAt) + (groupLen > 0 ? ldSize(groupLen) : 0) + headersSize
  const buf = Buffer.allocUnsafe(size)
  let pos = putStr(buf, 0, 1, m.type, typeLen)
  if (payloadLen > 0) {
    buf[pos++] = tag(2, LD)
    pos = putVarint(buf, pos, payloadLen)
    buf.set(m.payload!, pos)
    pos += payloadLen
  }
  pos = putStr(buf, pos, 3, m.id, idLen)
  pos = putStr(buf, pos, 4, m.queue, queueLen)
  pos = putNum(buf, pos, 5, m.retry)
  pos = putNum(buf, pos, 6, m.retried)
  pos = putStr(buf, pos, 7, m.errorMsg, errLen)
  pos = putNum(buf, pos, 8, m.timeout)
  pos = putNum(buf, pos, 9, m.deadline)
  pos = putStr(buf, pos, 10, m.uniqueKey, uniqueLen)
  pos = putNum(buf, pos, 11, m.lastFailedAt)
  pos = putNum(buf, pos, 12, m.retention)
  pos = putNum(buf, pos, 13, m.completedAt)
  pos = putStr(buf, pos, 14, m.groupKey, groupLen)
  for (let i = 0; i < headerKeys.length; i++) {
    const k = headerKeys[i]!
    const v = m.headers[k]!
    buf[pos++] = tag(15, LD)
    pos = putVarint(buf, pos, entryLens[i]!)
    // Go writes both parts of a map entry, even when they are empty.
    buf[pos++] = tag(1, LD)
    const kl = Buffer.byteLength(k)
    pos = putVarint(buf, pos, kl)
    pos += buf.write(k, pos, kl, "utf8")
    buf[pos++] = tag(2, LD)
    const vl = Buffer.byteLength(v)
    pos = putVarint(buf, pos, vl)
    pos += buf.write(v, pos, vl, "utf8")
  }
  if (pos !== size) throw new Error(`encodeTaskMessage: wrote ${pos} bytes, expected ${size}`)
  return buf
}

const encodeWithWriter = (m: TaskMessage): Uint8Array => {
  const w = new BinaryWriter()
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
 * header keys keep the last. Throws MessageDecodeError (wrap with Effect.try).
 */
export const decodeTaskMessage = (bytes: Uint8Array, key?: string): TaskMessage =>
  decodeWith("TaskMessage", bytes, key, (r) => {
    const m: Mutable<TaskMessage> = { ...emptyTaskMessage }
    const headers: Record<string, string> = {}
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1: m.type = readString(r); continue
          case 2: m.payload = readBytes(r); continue
          case 3: m.id = readString(r); continue
          case 4: m.queue = readString(r); continue
          case 7: m.errorMsg = readString(r); continue
          case 10: m.uniqueKey = readString(r); continue
          case 14: m.groupKey = readString(r); continue
          case 15: { const [k, v] = readMapEntry(r, readString, ""); headers[k] = v; continue }
        }
      } else if (wt === WireType.Varint) {
        switch (no) {
          case 5: m.retry = r.int32(); continue
          case 6: m.retried = r.int32(); continue
          case 8: m.timeout = readInt64(r); continue
          case 9: m.deadline = readInt64(r); continue
          case 11: m.lastFailedAt = readInt64(r); continue
          case 12: m.retention = readInt64(r); continue
          case 13: m.completedAt = readInt64(r); continue
        }
      }
      r.skip(wt, no)
    }
    m.headers = headers
    return m
  })
