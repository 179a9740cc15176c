/**
 * Trace headers on the wire: a task's traceparent/tracestate are ordinary entries of asynq's
 * TaskMessage headers map (field 15), encoded exactly as Go asynq encodes its headers vector, so
 * Go asynq carries them unchanged and reads them back.
 */
import { describe, expect, it } from "vitest"
import { parseTraceparent } from "../../src/steps/traceContext.js"
import { decodeTaskMessage, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { fromHex, hex } from "../support/fixtures.js"
import { taskMessage, vectors } from "../wire/fromFixture.js"

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
const tracestate = "congo=t61rcWkgMzE"

/** One map entry of field 15 as protobuf writes it: tag 0x7a, length, key (field 1), value (field 2). */
const entry = (k: string, v: string) => {
  const kb = Buffer.from(k, "utf8")
  const vb = Buffer.from(v, "utf8")
  const body = Buffer.concat([Buffer.from([0x0a, kb.length]), kb, Buffer.from([0x12, vb.length]), vb])
  return Buffer.concat([Buffer.from([0x7a, body.length]), body]).toString("hex")
}

describe("trace headers in asynq's TaskMessage", () => {
  const v = vectors().task_message.find((x) => x.name === "headers_two_entries")!

  it("the Go vector's own header entries have the layout `entry` builds (the check below relies on it)", () => {
    expect(v.hex.endsWith(entry("trace-id", "abc123") + entry("x-tenant", "acme"))).toBe(true)
  })

  it("a message with traceparent and tracestate encodes as Go's (same fields, header entries sorted by key) and decodes back", () => {
    const goPrefix = v.hex.slice(0, v.hex.length - (entry("trace-id", "abc123") + entry("x-tenant", "acme")).length)
    const msg = { ...taskMessage(v.fields), headers: { tracestate, traceparent } }
    const bytes = encodeTaskMessage(msg)
    expect(hex(bytes)).toBe(goPrefix + entry("traceparent", traceparent) + entry("tracestate", tracestate))
    const back = decodeTaskMessage(bytes)
    expect(back.headers).toEqual({ traceparent, tracestate })
    expect(parseTraceparent(back.headers.traceparent)).toMatchObject({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      sampled: true
    })
  })

  it("bytes as Go writes them (entries in either order, Go's map marshal is unordered) decode to the same headers", () => {
    const goPrefix = v.hex.slice(0, v.hex.length - (entry("trace-id", "abc123") + entry("x-tenant", "acme")).length)
    const reversed = decodeTaskMessage(
      fromHex(goPrefix + entry("tracestate", tracestate) + entry("traceparent", traceparent))
    )
    expect(reversed.headers).toEqual({ traceparent, tracestate })
  })
})

describe("traceparent parsing (W3C Trace Context)", () => {
  it("takes version 00 with its flags; refuses malformed and all-zero ids; reads a future version's first four fields", () => {
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled).toBe(false)
    expect(parseTraceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01")).toBeUndefined()
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")).toBeUndefined()
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01")).toBeUndefined()
    expect(parseTraceparent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toBeUndefined()
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")).toBeUndefined()
    expect(parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")?.traceId).toBe(
      "4bf92f3577b34da6a3ce929d0e0e4736"
    )
    expect(parseTraceparent("not a header")).toBeUndefined()
    expect(parseTraceparent(undefined)).toBeUndefined()
  })
})
