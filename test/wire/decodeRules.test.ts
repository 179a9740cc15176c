import { describe, expect, it } from "vitest"
import { MessageDecodeError } from "../../src/wire/errors.js"
import { decodeSchedulerEntry } from "../../src/wire/SchedulerEntry.js"
import { decodeServerInfo, encodeServerInfo, type ServerInfo } from "../../src/wire/ServerInfo.js"
import { decodeTaskMessage, emptyTaskMessage, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { epoch } from "../../src/wire/Timestamp.js"
import { fromHex, hex } from "../support/fixtures.js"

const server: ServerInfo = {
  host: "h",
  pid: 1,
  serverId: "s",
  concurrency: 2,
  queues: {},
  strictPriority: false,
  status: "active",
  startTime: epoch,
  activeWorkerCount: 0
}

describe("protobuf rules beyond the Go vectors", () => {
  it("writes map entries sorted by key whatever the object's insertion order", () => {
    const a = encodeTaskMessage({ ...emptyTaskMessage, type: "t", headers: { zeta: "1", alpha: "2" } })
    const b = encodeTaskMessage({ ...emptyTaskMessage, type: "t", headers: { alpha: "2", zeta: "1" } })
    // Same bytes as decode_vectors/headers_unsorted's Go re-marshal.
    expect(hex(a)).toBe("0a01747a0a0a05616c7068611201327a090a047a657461120131")
    expect(hex(b)).toBe(hex(a))
    expect(hex(encodeServerInfo({ ...server, queues: { low: 1, critical: 6 } }))).toContain(
      "2a0c0a08637269746963616c10062a070a036c6f771001"
    )
  })

  it("writes both parts of a map<string,int32> entry even when the weight is 0", () => {
    const bytes = encodeServerInfo({ ...server, queues: { q: 0 } })
    expect(hex(bytes)).toContain("2a050a01711000")
    expect(decodeServerInfo(bytes).queues).toEqual({ q: 0 })
  })

  it("keeps a queue named __proto__ in a ServerInfo's queue map", () => {
    const queues = JSON.parse('{"__proto__":3,"q":1}') as Record<string, number>
    const decoded = decodeServerInfo(encodeServerInfo({ ...server, queues })).queues
    expect(Object.entries(decoded).sort()).toEqual([
      ["__proto__", 3],
      ["q", 1]
    ])
  })

  it("writes a zero Timestamp as an empty embedded message, as Go does for a set pointer", () => {
    expect(hex(encodeServerInfo({ ...server, startTime: epoch }))).toContain("4200")
  })

  it("skips a known field number sent with another wire type, as Go treats it as unknown", () => {
    // type "t", then field 5 (retry) as a length-delimited blob, then id "x".
    const m = decodeTaskMessage(fromHex("0a01742a0201021a0178"))
    expect(m.retry).toBe(0)
    expect(m.id).toBe("x")
  })

  it("skips unknown groups (wire types 3/4) and reads a non-zero bool varint as true", () => {
    // field 99 start group { field 1 varint 5 } end group, then strict_priority (6) = varint 2.
    const m = decodeServerInfo(fromHex("9b060805 9c06 3002".replace(/ /g, "")))
    expect(m.strictPriority).toBe(true)
  })

  it("merges a Timestamp that appears twice, as Go merges repeated message fields", () => {
    // start_time {seconds: 100} then start_time {nanos: 7}.
    const m = decodeServerInfo(fromHex("420208644202100" + "7"))
    expect(m.startTime).toEqual({ seconds: 100, nanos: 7 })
  })

  it("keeps every repeated enqueue_options element, empty ones too, in order", () => {
    const m = decodeSchedulerEntry(fromHex("2a01612a002a0162"))
    expect(m.enqueueOptions).toEqual(["a", "", "b"])
  })

  it.each([
    ["invalid UTF-8 in a string field (Go's proto3 rejects it)", "0a02c328"],
    ["field number 0", "0001"],
    ["a length past the end", "0a0574"],
    ["a stray end-group tag", "0c"],
    ["a varint running off the end", "28ff"]
  ])("fails with MessageDecodeError on %s", (_, h) => {
    expect(() => decodeTaskMessage(fromHex(h))).toThrow(MessageDecodeError)
    expect(() => decodeServerInfo(fromHex(h))).toThrow(MessageDecodeError)
  })
})
