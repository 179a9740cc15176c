/**
 * Field writers and readers shared by the asynq protobuf codecs (TaskMessage, ServerInfo, …),
 * on top of @bufbuild/protobuf's BinaryWriter/BinaryReader. Writers follow Go's proto3 output:
 * fields in field-number order, default values omitted, map entries sorted by key (Go's
 * deterministic marshal) with both entry parts always written.
 */
import { BinaryReader, type BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { MessageDecodeError } from "./errors.js"
import { keptBytes } from "./byteSlab.js"

/** A decoder's working copy of a readonly message type. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const INT64_MAX = (1n << 63n) - 1n
const INT64_MIN = -(1n << 63n)

/** A JS number as an int64 (clamped: 2^63 as a double is just past int64's maximum). */
export const toInt64 = (v: number): bigint => {
  const b = BigInt(Math.trunc(v))
  return b > INT64_MAX ? INT64_MAX : b < INT64_MIN ? INT64_MIN : b
}

export const writeString = (w: BinaryWriter, field: number, v: string): void => {
  if (v !== "") w.tag(field, WireType.LengthDelimited).string(v)
}
/** `undefined` is Go's nil slice; nil and empty are both absent on the wire. */
export const writeBytes = (w: BinaryWriter, field: number, v: Uint8Array | undefined): void => {
  if (v !== undefined && v.length > 0) w.tag(field, WireType.LengthDelimited).bytes(v)
}
export const writeInt32 = (w: BinaryWriter, field: number, v: number): void => {
  if (v !== 0) w.tag(field, WireType.Varint).int32(v)
}
export const writeInt64 = (w: BinaryWriter, field: number, v: number): void => {
  if (v === 0) return
  // A whole number in [0, 2^32) has the same varint as uint32, which BinaryWriter writes without
  // BigInt (counts, seconds and unix times in asynq's messages); anything else goes through int64.
  if (v > 0 && v <= 0xffffffff && Number.isInteger(v)) w.tag(field, WireType.Varint).uint32(v)
  else w.tag(field, WireType.Varint).int64(toInt64(v))
}
export const writeBool = (w: BinaryWriter, field: number, v: boolean): void => {
  if (v) w.tag(field, WireType.Varint).bool(true)
}
export const writeRepeatedString = (w: BinaryWriter, field: number, vs: ReadonlyArray<string>): void => {
  // Every element is written, empty strings too.
  for (const v of vs) w.tag(field, WireType.LengthDelimited).string(v)
}

const writeMap = <V>(
  w: BinaryWriter,
  field: number,
  m: Readonly<Record<string, V>>,
  writeValue: (w: BinaryWriter, v: V) => void
) => {
  for (const k of Object.keys(m).sort()) {
    // Go writes both parts of a map entry, even when they are the default.
    w.tag(field, WireType.LengthDelimited).fork()
    w.tag(1, WireType.LengthDelimited).string(k)
    writeValue(w, m[k]!)
    w.join()
  }
}

/** Writes a map<string,string> in key order (the bytes of Go's deterministic marshal). */
export const writeStringMap = (w: BinaryWriter, field: number, m: Readonly<Record<string, string>>): void =>
  writeMap(w, field, m, (w, v) => w.tag(2, WireType.LengthDelimited).string(v))

/** Writes a map<string,int32> in key order. */
export const writeInt32Map = (w: BinaryWriter, field: number, m: Readonly<Record<string, number>>): void =>
  writeMap(w, field, m, (w, v) => w.tag(2, WireType.Varint).int32(v))

/**
 * Stores a decoded map entry as an own property. Plain assignment would treat the key "__proto__"
 * (a valid Go map key) as the prototype setter and lose the entry.
 */
export const setEntry = <V>(o: Record<string, V>, k: string, v: V): void => {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  else o[k] = v
}

/** Reads a string field the way Go's proto3 does: invalid UTF-8 is an error. */
export const readString = (r: BinaryReader): string => r.string(true)

/** Reads an int64 varint as a JS number (exact within ±2^53). */
export const readInt64 = (r: BinaryReader): number => Number(r.int64())

/**
 * Reads a `bytes` field; empty is Go's nil after a decode (`undefined`). The bytes are copied when
 * the message may sit in a larger socket buffer, into a shared slab when short; a long field that
 * makes up most of its buffer is kept as a view, not copied (byteSlab.ts, keptBytes).
 */
export const readBytes = (r: BinaryReader): Uint8Array | undefined => {
  const b = r.bytes()
  return b.length === 0 ? undefined : keptBytes(b)
}

/**
 * Reads one map entry (key = field 1, value = field 2 with wire type `valueType`); a missing part
 * is the default, unknown parts are skipped, a repeated part's last value wins.
 */
export const readMapEntry = <V>(
  r: BinaryReader,
  readValue: (r: BinaryReader) => V,
  empty: V,
  valueType: WireType = WireType.LengthDelimited
): [string, V] => {
  const e = new BinaryReader(r.bytes())
  let key = ""
  let value = empty
  while (e.pos < e.len) {
    const [no, wt] = e.tag()
    if (no === 1 && wt === WireType.LengthDelimited) key = readString(e)
    else if (no === 2 && wt === valueType) value = readValue(e)
    else e.skip(wt, no)
  }
  return [key, value]
}

/**
 * Runs a message decoder over `bytes`. Any failure (truncated input, a bad tag, invalid UTF-8,
 * trailing garbage) becomes a MessageDecodeError naming the message type and the Redis key.
 */
export const decodeWith = <A>(
  what: string,
  bytes: Uint8Array,
  key: string | undefined,
  body: (r: BinaryReader) => A
): A => {
  try {
    const r = new BinaryReader(bytes)
    const out = body(r)
    if (r.pos !== r.len) throw new Error("premature EOF")
    return out
  } catch (e) {
    throw new MessageDecodeError({
      message: `${what}${key ? ` at ${key}` : ""} is not a valid asynq ${what} (${e instanceof Error ? e.message : String(e)}); it was not written by asynq or effect-asynq, or it is corrupt`,
      ...(key ? { key } : {})
    })
  }
}
