/**
 * google.protobuf.Timestamp as asynq uses it (ServerInfo.start_time, WorkerInfo.deadline, …):
 * whole seconds since the unix epoch plus nanoseconds in [0, 1e9). asynq always writes one
 * (`timestamppb.New(t)`), so a Go zero `time.Time` appears as {@link goZeroTime}.
 */
import { BinaryReader, type BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { readInt64, writeInt32, writeInt64 } from "./protoFields.js"

/** A protobuf Timestamp: whole seconds since the unix epoch and nanoseconds. */
export interface Timestamp {
  readonly seconds: number
  readonly nanos: number
}

/** Go's zero time.Time (0001-01-01T00:00:00Z): what a scheduler entry that never ran has as its previous run. */
export const goZeroTime: Timestamp = { seconds: -62135596800, nanos: 0 }

/** Whether a Timestamp is Go's zero `time.Time` (January 1, year 1, UTC). */
export const isGoZeroTime = (t: Timestamp): boolean => t.seconds === goZeroTime.seconds && t.nanos === 0

/** A unix-ms time (fractions of a ms kept as nanos). */
export const timestampFromMillis = (ms: number): Timestamp => {
  const seconds = Math.floor(ms / 1000)
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) }
}

/** A Date as a protobuf Timestamp. */
export const timestampFromDate = (d: Date): Timestamp => timestampFromMillis(d.getTime())

/** Unix ms (sub-ms nanos dropped). */
export const timestampToMillis = (t: Timestamp): number => t.seconds * 1000 + Math.floor(t.nanos / 1e6)

/** A protobuf Timestamp as a Date. */
export const timestampToDate = (t: Timestamp): Date => new Date(timestampToMillis(t))

/** Writes the Timestamp as an embedded message; it is always present, as asynq always sets it. */
export const writeTimestamp = (w: BinaryWriter, field: number, t: Timestamp): void => {
  w.tag(field, WireType.LengthDelimited).fork()
  writeInt64(w, 1, t.seconds)
  writeInt32(w, 2, t.nanos)
  w.join()
}

/**
 * Reads an embedded Timestamp. A Timestamp field seen twice is merged into the earlier one, as
 * Go does for message fields; an absent one reads as the epoch, which is what asynq's
 * `AsTime()` makes of a nil Timestamp.
 */
export const readTimestamp = (r: BinaryReader, prev: Timestamp = epoch): Timestamp => {
  const m = new BinaryReader(r.bytes())
  let { seconds, nanos } = prev
  while (m.pos < m.len) {
    const [no, wt] = m.tag()
    if (no === 1 && wt === WireType.Varint) seconds = readInt64(m)
    else if (no === 2 && wt === WireType.Varint) nanos = m.int32()
    else m.skip(wt, no)
  }
  return { seconds, nanos }
}

/** The unix epoch as a Timestamp. */
export const epoch: Timestamp = { seconds: 0, nanos: 0 }
