/**
 * Byte arrays carved out of shared slabs (src/wire/byteSlab.ts): each is zeroed, has its own
 * bytes (no two overlap, also across a slab change), and a string's UTF-8 written into the slab is
 * exactly what TextEncoder makes. The encoded TaskMessage and decoded payloads live in them.
 */
import { describe, expect, it } from "vitest"
import { maxSlabBytes, slabBytes, slabUtf8 } from "../../src/wire/byteSlab.js"
import { decodeTaskMessage, decodeTaskMessageWithReader, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { encodePayload } from "../../src/wire/payload.js"

describe("slabBytes", () => {
  it("hands out zeroed arrays that never share a byte, over many slabs", () => {
    const arrays: Array<Uint8Array> = []
    // Sizes that do not divide a slab, so some requests meet a full slab and start the next one.
    for (let i = 0; i < 2000; i++) {
      const a = slabBytes(1 + ((i * 37) % 300))
      expect(a.length).toBe(1 + ((i * 37) % 300))
      expect(a.every((b) => b === 0)).toBe(true)
      a.fill((i % 255) + 1)
      arrays.push(a)
    }
    // Every array still holds what was written into it: none was overwritten by a later one.
    arrays.forEach((a, i) => expect(a.every((b) => b === (i % 255) + 1)).toBe(true))
    // More than one slab was used, and within a slab the regions do not overlap.
    const byBuffer = new Map<ArrayBufferLike, Array<Uint8Array>>()
    for (const a of arrays) byBuffer.set(a.buffer, [...(byBuffer.get(a.buffer) ?? []), a])
    expect(byBuffer.size).toBeGreaterThan(1)
    for (const list of byBuffer.values()) {
      const spans = list.map((a) => [a.byteOffset, a.byteOffset + a.length] as const).sort((x, y) => x[0] - y[0])
      for (let j = 1; j < spans.length; j++) expect(spans[j]![0]).toBeGreaterThanOrEqual(spans[j - 1]![1])
    }
  })

  it("gives an array of its own past maxSlabBytes", () => {
    const big = slabBytes(maxSlabBytes + 1)
    expect(big.byteOffset).toBe(0)
    expect(big.buffer.byteLength).toBe(maxSlabBytes + 1)
    expect(big.every((b) => b === 0)).toBe(true)
  })
})

describe("slabUtf8", () => {
  const encoder = new TextEncoder()
  const samples = [
    "",
    "a",
    "hello world",
    "é",
    "日本語のテキスト",
    "emoji 😀 pair",
    "lone \ud800 surrogate",
    "trail \udc00",
    "x".repeat(500),
    "ü".repeat(300)
  ]

  it("writes what TextEncoder writes, each string in its own bytes", () => {
    const out: Array<[string, Uint8Array]> = []
    for (let round = 0; round < 50; round++) for (const s of samples) out.push([s, slabUtf8(s)!])
    for (const [s, bytes] of out) expect(Buffer.from(bytes).equals(Buffer.from(encoder.encode(s)))).toBe(true)
  })

  it("leaves a string whose longest form exceeds maxSlabBytes to the caller", () => {
    expect(slabUtf8("x".repeat(Math.floor(maxSlabBytes / 3) + 1))).toBeUndefined()
    const long = "long text ".repeat(400)
    expect(Buffer.from(encodePayload(long)!).toString("utf8")).toBe(long)
  })
})

describe("messages in slabs", () => {
  it("an encoded message and a decoded payload keep their bytes while later ones are made", () => {
    const made = Array.from({ length: 500 }, (_, i) => {
      const payload = encodePayload({ i, text: "payload ".repeat(i % 20) })!
      const msg = {
        type: `t${i}`,
        payload,
        id: `id-${i}`,
        queue: "q",
        retry: i % 26,
        retried: 0,
        errorMsg: "",
        timeout: 1800,
        deadline: 0,
        uniqueKey: "",
        lastFailedAt: 0,
        retention: 0,
        completedAt: 0,
        groupKey: "",
        headers: {}
      }
      return { i, bytes: encodeTaskMessage(msg), json: JSON.stringify({ i, text: "payload ".repeat(i % 20) }) }
    })
    const decoded = made.map((m) => ({ ...m, msg: decodeTaskMessage(m.bytes) }))
    for (const { i, json, msg } of decoded) {
      expect(msg.id).toBe(`id-${i}`)
      expect(msg.retry).toBe(i % 26)
      expect(Buffer.from(msg.payload!).toString("utf8")).toBe(json)
    }
  })
})

describe("decoded payloads: copied only when the format needs it (issue 34)", () => {
  const messageWith = (payload: Uint8Array) =>
    encodeTaskMessage({
      type: "t",
      payload,
      id: "id-1",
      queue: "q",
      retry: 25,
      retried: 0,
      errorMsg: "",
      timeout: 1800,
      deadline: 0,
      uniqueKey: "",
      lastFailedAt: 0,
      retention: 0,
      completedAt: 0,
      groupKey: "",
      headers: {}
    })
  const decoders = [
    ["the direct decoder", decodeTaskMessage],
    ["the general decoder", decodeTaskMessageWithReader]
  ] as const

  for (const [name, decode] of decoders) {
    it(`${name}: a large payload in a reply buffer of its own is read in place, not copied`, () => {
      const body = encodePayload({ s: "x".repeat(100_000) })!
      const bytes = messageWith(body)
      const msg = decode(bytes)
      expect(msg.payload!.buffer).toBe(bytes.buffer)
      expect(Buffer.from(msg.payload!).equals(Buffer.from(body))).toBe(true)
    })

    it(`${name}: a payload that is a small part of a larger buffer (a socket chunk) is copied, so it does not keep the chunk alive`, () => {
      // 100 bytes: into a slab; 5,000 (less than an eighth of the chunk): an array of its own.
      for (const size of [100, 5_000]) {
        const body = encodePayload({ s: "y".repeat(size) })!
        const own = messageWith(body)
        const chunk = new Uint8Array(64 * 1024)
        chunk.set(own, 1000)
        const msg = decode(chunk.subarray(1000, 1000 + own.length))
        expect(msg.payload!.buffer).not.toBe(chunk.buffer)
        expect(msg.payload!.buffer.byteLength).toBeLessThan(chunk.length)
        expect(Buffer.from(msg.payload!).equals(Buffer.from(body))).toBe(true)
        // The copy is its own: the chunk's bytes being reused does not change the payload.
        chunk.fill(0)
        expect(Buffer.from(msg.payload!).equals(Buffer.from(body))).toBe(true)
      }
    })

    it(`${name}: a payload of at least an eighth of its socket chunk is read in place (a copy would cost as much as the read)`, () => {
      const body = encodePayload({ s: "z".repeat(10_000) })!
      const own = messageWith(body)
      const chunk = new Uint8Array(64 * 1024)
      chunk.set(own, 1000)
      const msg = decode(chunk.subarray(1000, 1000 + own.length))
      expect(msg.payload!.buffer).toBe(chunk.buffer)
      expect(Buffer.from(msg.payload!).equals(Buffer.from(body))).toBe(true)
    })
  }
})
