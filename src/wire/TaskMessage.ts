import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { Data } from "effect"

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

/** Bytes in Redis that are not a TaskMessage asynq could have written. */
export class MessageDecodeError extends Data.TaggedError("MessageDecodeError")<{
  readonly message: string
  readonly key?: string
}> {}

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

const INT64_MAX = (1n << 63n) - 1n
const INT64_MIN = -(1n << 63n)
/** A JS number as an int64 (clamped: 2^63 as a double is just past int64's maximum). */
export const toInt64 = (v: number): bigint => {
  const b = BigInt(Math.trunc(v))
  return b > INT64_MAX ? INT64_MAX : b < INT64_MIN ? INT64_MIN : b
}
const int64 = (w: BinaryWriter, field: number, v: number) => {
  if (v !== 0) w.tag(field, WireType.Varint).int64(toInt64(v))
}
const int32 = (w: BinaryWriter, field: number, v: number) => {
  if (v !== 0) w.tag(field, WireType.Varint).int32(v)
}
const str = (w: BinaryWriter, field: number, v: string) => {
  if (v !== "") w.tag(field, WireType.LengthDelimited).string(v)
}

/** Writes a map<string,string> in key order (the bytes of Go's deterministic marshal). */
export const writeStringMap = (w: BinaryWriter, field: number, m: Readonly<Record<string, string>>) => {
  for (const k of Object.keys(m).sort()) {
    // Go writes both parts of a map entry, even when empty.
    w.tag(field, WireType.LengthDelimited).fork()
    w.tag(1, WireType.LengthDelimited).string(k)
    w.tag(2, WireType.LengthDelimited).string(m[k]!)
    w.join()
  }
}

/** Reads one map entry (key = field 1, value = field 2; a missing part is the default). */
export const readMapEntry = <V>(r: BinaryReader, readValue: (r: BinaryReader) => V, empty: V): [string, V] => {
  const end = r.uint32() + r.pos
  let key = ""
  let value = empty
  while (r.pos < end) {
    const [no, wt] = r.tag()
    if (no === 1 && wt === WireType.LengthDelimited) key = r.string()
    else if (no === 2) value = readValue(r)
    else r.skip(wt, no)
  }
  return [key, value]
}

export const encodeTaskMessage = (m: TaskMessage): Uint8Array => {
  const w = new BinaryWriter()
  str(w, 1, m.type)
  if (m.payload !== undefined && m.payload.length > 0) w.tag(2, WireType.LengthDelimited).bytes(m.payload)
  str(w, 3, m.id)
  str(w, 4, m.queue)
  int32(w, 5, m.retry)
  int32(w, 6, m.retried)
  str(w, 7, m.errorMsg)
  int64(w, 8, m.timeout)
  int64(w, 9, m.deadline)
  str(w, 10, m.uniqueKey)
  int64(w, 11, m.lastFailedAt)
  int64(w, 12, m.retention)
  int64(w, 13, m.completedAt)
  str(w, 14, m.groupKey)
  writeStringMap(w, 15, m.headers)
  return w.finish()
}

const num = (v: bigint | string) => Number(v)

/** Decodes a TaskMessage; unknown fields are skipped, a repeated scalar's last value wins. */
export const decodeTaskMessage = (bytes: Uint8Array, key?: string): TaskMessage => {
  try {
    const r = new BinaryReader(bytes)
    const m = { ...emptyTaskMessage, headers: {} as Record<string, string> } as { -readonly [K in keyof TaskMessage]: TaskMessage[K] } & {
      headers: Record<string, string>
    }
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      switch (no) {
        case 1: m.type = r.string(); break
        case 2: { const b = r.bytes(); m.payload = b.length > 0 ? b : undefined; break }
        case 3: m.id = r.string(); break
        case 4: m.queue = r.string(); break
        case 5: m.retry = r.int32(); break
        case 6: m.retried = r.int32(); break
        case 7: m.errorMsg = r.string(); break
        case 8: m.timeout = num(r.int64()); break
        case 9: m.deadline = num(r.int64()); break
        case 10: m.uniqueKey = r.string(); break
        case 11: m.lastFailedAt = num(r.int64()); break
        case 12: m.retention = num(r.int64()); break
        case 13: m.completedAt = num(r.int64()); break
        case 14: m.groupKey = r.string(); break
        case 15: { const [k, v] = readMapEntry(r, (x) => x.string(), ""); m.headers[k] = v; break }
        default: r.skip(wt, no)
      }
    }
    if (r.pos !== r.len) throw new Error("trailing bytes")
    return m
  } catch (e) {
    throw new MessageDecodeError({
      message: `task message${key ? ` at ${key}` : ""} is not a valid asynq TaskMessage (${e instanceof Error ? e.message : String(e)}); it was not written by asynq or effect-asynq, or it is corrupt`,
      ...(key ? { key } : {})
    })
  }
}
