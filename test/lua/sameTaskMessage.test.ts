/**
 * lua/includes/sameTaskMessage.lua, run in a real Redis: two encoded TaskMessages are the same
 * message when a protobuf decoder reads the same fields from them (headers as a map), whatever
 * their bytes. Checked against the captured Go data: each decode vector (hand-built bytes: map
 * entries unsorted, fields reversed, explicit defaults, a non-canonical int32, …) is the same
 * message as Go's own re-marshal of what it decoded, and no two different messages are the same.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { emptyTaskMessage, encodeTaskMessage, type TaskMessage } from "../../src/wire/TaskMessage.js"
import { fromHex } from "../support/fixtures.js"
import { rawClient } from "../support/redis.js"
import { taskMessage, vectors } from "../wire/fromFixture.js"

const fragment = readFileSync(fileURLToPath(new URL("../../lua/includes/sameTaskMessage.lua", import.meta.url)), "utf8")
const script = `${fragment}\nreturn sameTaskMessage(ARGV[1], ARGV[2]) and 1 or 0`
const c = rawClient()
afterAll(() => void c.disconnect())

const same = async (a: Uint8Array, b: Uint8Array): Promise<boolean> =>
  (await c.eval(script, 0, Buffer.from(a), Buffer.from(b))) === 1

/** The message's bytes as Go's proto.Marshal may write them: fields in number order, header entries in `order`. */
const inHeaderOrder = (m: TaskMessage, order: ReadonlyArray<string>): Uint8Array =>
  Buffer.concat([
    encodeTaskMessage({ ...m, headers: {} }),
    ...order.map((k) => encodeTaskMessage({ ...emptyTaskMessage, headers: { [k]: m.headers[k]! } }))
  ])

describe("sameTaskMessage (Lua)", () => {
  it("a message with its header entries in Go's other order is the same message; a changed, added or dropped header is not", async () => {
    const v = vectors().task_message.find((t) => t.name === "headers_two_entries")!
    const sorted = fromHex(v.hex)
    const m = taskMessage(v.fields)
    const goOrder = inHeaderOrder(m, ["x-tenant", "trace-id"])
    expect(Buffer.from(goOrder).equals(Buffer.from(sorted))).toBe(false)
    expect(await same(sorted, goOrder)).toBe(true)
    expect(await same(goOrder, sorted)).toBe(true)
    const three = { ...m, headers: { ...m.headers, "a-first": "1" } }
    expect(await same(encodeTaskMessage(three), inHeaderOrder(three, ["x-tenant", "a-first", "trace-id"]))).toBe(true)
    for (const other of [
      { ...m.headers, "x-tenant": "other" },
      three.headers,
      { "x-tenant": "acme" },
      { "trace-id": "abc123", "x-tenant": "acme", "": "" }
    ]) {
      expect(await same(goOrder, encodeTaskMessage({ ...m, headers: other }))).toBe(false)
    }
    // Any other field that differs is a different message.
    for (const over of [
      { retry: 24 },
      { payload: new Uint8Array([1]) },
      { id: "hdr-2" },
      { timeout: 0 },
      { retried: 1 }
    ]) {
      expect(await same(goOrder, encodeTaskMessage({ ...m, ...over }))).toBe(false)
    }
  })

  it("Go's decode vectors: each is the same message as Go's re-marshal of what it decoded, and different from every other", async () => {
    const decodable = vectors().decode_vectors.filter(
      (d) => d.message === "TaskMessage" && d.go_remarshal_hex !== undefined
    )
    expect(decodable.map((d) => d.name)).toEqual(
      expect.arrayContaining([
        "headers_unsorted",
        "fields_reverse_order",
        "duplicate_map_key_last_wins",
        "explicit_default_values",
        "int32_negative_5_byte_varint",
        "unknown_fields"
      ])
    )
    for (const d of decodable) {
      expect([d.name, await same(fromHex(d.hex), fromHex(d.go_remarshal_hex!))]).toEqual([d.name, true])
      for (const other of decodable)
        if (other !== d)
          expect([d.name, other.name, await same(fromHex(d.hex), fromHex(other.hex))]).toEqual([
            d.name,
            other.name,
            false
          ])
    }
  })

  it("bytes that are not a message are the same only as the very same bytes", async () => {
    const truncated = fromHex(vectors().decode_vectors.find((d) => d.name === "truncated")!.hex)
    expect(await same(truncated, truncated)).toBe(true)
    expect(await same(truncated, fromHex("0a0174"))).toBe(false)
    expect(await same(fromHex("0a0174"), truncated)).toBe(false)
    expect(await same(fromHex("0a0574"), fromHex("0a0574"))).toBe(true)
    expect(await same(fromHex("0a0574"), fromHex("0a0174"))).toBe(false)
  })
})
