import { describe, expect, it } from "vitest"
import {
  decodeTaskMessage,
  decodeTaskMessageWithReader,
  encodeTaskMessage,
  encodeTaskMessageWithText,
  encodeTaskMessageWithWriter,
  MessageDecodeError,
  type TaskMessage
} from "../../src/wire/TaskMessage.js"
import { decodeTaskMessageDirect } from "../../src/wire/taskMessageDirectDecode.js"
import { fromHex, hex } from "../support/fixtures.js"
import { asDecoded, taskMessage, vectors } from "./fromFixture.js"

const all = vectors().task_message
const exact = all.filter((v) => v.name !== "large_int64")

/**
 * Random TaskMessages from a seed: strings from awkward pieces (multi-byte, surrogates, lengths past
 * 127 and 16383), numbers at the varint boundaries up to each field's `max`. `wide` adds what the
 * direct codecs leave to the general ones: -1 and 2^40 (int64 fields), a BOM, a "__proto__" key.
 */
const randomMessages = (seed: number, wide: boolean) => {
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  const pieces = [
    "",
    "a",
    "queue",
    "é",
    "☃",
    "🎉",
    "\uD800",
    "x".repeat(130),
    "y".repeat(20_000),
    "żółć",
    ...(wide ? ["\uFEFFbom", "__proto__"] : [])
  ]
  const str = () => Array.from({ length: rand(4) }, () => pieces[rand(pieces.length)]!).join("")
  const num = (max: number) =>
    [0, 1, 127, 128, 16_383, 16_384, 2_097_152, 268_435_456, max, -1, 2 ** 40][
      rand(!wide ? 9 : max < 2 ** 32 ? 10 : 11)
    ]!
  const int64Max = wide ? 2 ** 35 : 2 ** 32 - 1
  const next = (): TaskMessage => {
    const headers: Record<string, string> = {}
    for (let h = rand(4); h > 0; h--) headers[str()] = str()
    return {
      type: str(),
      payload:
        rand(3) === 0
          ? undefined
          : new Uint8Array(rand(3) === 0 ? 0 : [1, 130, 20_000][rand(3)]!).map((_, j) => j % 256),
      id: str(),
      queue: str(),
      retry: num(2 ** 31 - 1),
      retried: num(2 ** 31 - 1),
      errorMsg: str(),
      timeout: num(int64Max),
      deadline: num(int64Max),
      uniqueKey: str(),
      lastFailedAt: num(int64Max),
      retention: num(int64Max),
      completedAt: num(int64Max),
      groupKey: str(),
      headers
    }
  }
  return { next, rand }
}

describe("TaskMessage codec against Go asynq's vectors", () => {
  it("covers all 19 task_message vectors", () => {
    expect(all).toHaveLength(19)
  })

  it.each(exact.map((v) => [v.name, v] as const))("%s: encodes byte for byte as Go's deterministic marshal", (_, v) => {
    const bytes = encodeTaskMessage(taskMessage(v.fields))
    expect(hex(bytes)).toBe(v.hex)
    expect(bytes.length).toBe(v.byte_length)
  })

  it.each(exact.map((v) => [v.name, v] as const))("%s: decodes to the vector's fields", (_, v) => {
    expect(decodeTaskMessage(fromHex(v.hex))).toEqual(asDecoded(taskMessage(v.fields)))
  })

  it("a message that cannot be encoded (retry beyond int32) throws and leaves the next encode unaffected", () => {
    const v = exact.find((x) => x.name === "headers_two_entries")!
    const good = taskMessage(v.fields)
    const before = hex(encodeTaskMessage(good))
    expect(() => encodeTaskMessage({ ...good, retry: 2 ** 40 })).toThrow()
    expect(() => encodeTaskMessage({ ...good, retried: 1.5 })).toThrow("invalid int32: 1.5")
    expect(hex(encodeTaskMessage(good))).toBe(before)
    expect(before).toBe(v.hex)
  })

  it("keeps a header named __proto__ (an ordinary Go map key) through encode and decode", () => {
    const headers = JSON.parse('{"__proto__":"p","a":"1"}') as Record<string, string>
    const m = decodeTaskMessage(encodeTaskMessage({ ...taskMessage(exact[0]!.fields), headers }))
    expect(Object.keys(m.headers).sort()).toEqual(["__proto__", "a"])
    expect(Object.getOwnPropertyDescriptor(m.headers, "__proto__")?.value).toBe("p")
    expect(Object.getPrototypeOf(m.headers)).toBe(Object.prototype)
  })

  it("decodes a payload as a plain Uint8Array copy, not a view into the input", () => {
    const v = all.find((x) => x.name === "binary_payload")!
    const input = fromHex(v.hex)
    const m = decodeTaskMessage(input)
    input.fill(0)
    expect(Array.from(m.payload!)).toEqual([0x00, 0x01, 0x00, 0xff, 0xfe, 0x80, 0x7f, 0x00])
    expect(m.payload!.constructor).toBe(Uint8Array)
  })

  describe("large_int64 — known limitation: int64 fields are JS numbers, exact only up to 2^53", () => {
    const v = all.find((x) => x.name === "large_int64")!

    it("decodes int64 values beyond 2^53 to the nearest double, and int32 extremes exactly", () => {
      const m = decodeTaskMessage(fromHex(v.hex))
      expect(m.timeout).toBe(2 ** 53) // Go has 2^53 + 1
      expect(m.completedAt).toBe(2 ** 53)
      expect(m.lastFailedAt).toBe(2 ** 63) // Go has 2^63 - 1
      expect(m.retention).toBe(1099511627776) // 2^40: exact
      expect(m.deadline).toBe(4102444800)
      expect(m.retry).toBe(2147483647)
      expect(m.retried).toBe(2147483646)
    })

    it("re-encodes with 2^63 clamped back to int64 max (byte-exact), and only 2^53 + 1 comes out as 2^53", () => {
      const bytes = hex(encodeTaskMessage(decodeTaskMessage(fromHex(v.hex))))
      // Fields 8 (timeout) and 13 (completed_at): varint 2^53+1 = 81 80 80 80 80 80 80 10, 2^53 = 80 80 … 10.
      const expected = v.hex
        .replace("408180808080808010", "408080808080808010")
        .replace("688180808080808010", "688080808080808010")
      expect(expected).not.toBe(v.hex)
      expect(bytes).toBe(expected)
      // Field 11 (last_failed_at) = int64 max, exactly Go's bytes.
      expect(bytes).toContain("58ffffffffffffffff7f")
    })

    it("encodes from the vector's fields the same way (the decimal strings parse to the same doubles)", () => {
      const bytes = hex(encodeTaskMessage(taskMessage(v.fields)))
      expect(bytes).toBe(hex(encodeTaskMessage(decodeTaskMessage(fromHex(v.hex)))))
      expect(bytes.length / 2).toBe(v.byte_length)
    })
  })

  it("fails with MessageDecodeError, naming the key, for every vector cut short by one byte", () => {
    for (const v of all) {
      const cut = fromHex(v.hex).subarray(0, v.byte_length - 1)
      let err: unknown
      try {
        decodeTaskMessage(cut, "asynq:{q}:t:x")
      } catch (e) {
        err = e
      }
      expect(err, v.name).toBeInstanceOf(MessageDecodeError)
      expect((err as MessageDecodeError).key).toBe("asynq:{q}:t:x")
      expect((err as MessageDecodeError).message).toContain("asynq:{q}:t:x")
    }
  })
})

describe("TaskMessage direct encoder", () => {
  /** The BinaryWriter encoding (the codec's general path). */
  const reference = encodeTaskMessageWithWriter

  it("writes the same bytes as the BinaryWriter path, for random messages (ASCII, multi-byte, surrogates, lengths past 127 and 16383, numbers up to 2^32)", () => {
    const { next } = randomMessages(12345, false)
    for (let i = 0; i < 2_000; i++) {
      const m = next()
      expect(hex(encodeTaskMessage(m))).toBe(hex(reference(m)))
    }
  })

  it("leaves other numbers to the BinaryWriter path (same bytes: negative, past 2^32, int64)", () => {
    const base = taskMessage(exact[0]!.fields)
    for (const m of [
      { ...base, retry: -1 },
      { ...base, timeout: 2 ** 32 },
      { ...base, retention: 9_223_372_036 },
      { ...base, deadline: -5 }
    ]) {
      expect(hex(encodeTaskMessage(m))).toBe(hex(reference(m)))
    }
  })
})

describe("TaskMessage with a text payload (encodeTaskMessageWithText)", () => {
  const utf8 = (s: string) => new TextEncoder().encode(s)

  it("writes the same bytes as encodeTaskMessage with the text's UTF-8 as payload, the payload a view into them (ASCII texts)", () => {
    const { next } = randomMessages(777, false)
    const texts = ["a", "x".repeat(127), "y".repeat(128), JSON.stringify({ s: "z".repeat(10_000) }), "q".repeat(70_000)]
    for (let i = 0; i < 500; i++) {
      const m = next()
      const text = texts[i % texts.length]!
      const r = encodeTaskMessageWithText(m, text)
      if (r === undefined) {
        // Only a message the direct encoder leaves to BinaryWriter (none among these).
        throw new Error(`no direct encoding for message ${i}`)
      }
      expect(hex(r.bytes)).toBe(hex(encodeTaskMessage({ ...m, payload: utf8(text) })))
      expect(r.payload.buffer).toBe(r.bytes.buffer)
      expect(Array.from(r.payload)).toEqual(Array.from(utf8(text)))
    }
  })

  it("gives undefined for a text that is not ASCII, an empty text, and a message the direct encoder does not write", () => {
    const base = taskMessage(exact[0]!.fields)
    for (const text of ["é", `${"a".repeat(5000)}é`, "🎉".repeat(300), `${"b".repeat(800)}\uD800`, "\u0080"])
      expect(encodeTaskMessageWithText(base, text)).toBeUndefined()
    expect(encodeTaskMessageWithText(base, "")).toBeUndefined()
    expect(encodeTaskMessageWithText({ ...base, retry: -1 }, "abc")).toBeUndefined()
  })
})

describe("TaskMessage direct decoder", () => {
  const { next: randomMessage, rand } = randomMessages(4242, true)
  /** A message with its payload as base64 (deep equality walks a Uint8Array element by element: slow for 20 KB payloads). */
  const comparable = (m: TaskMessage) => ({
    ...m,
    payload: m.payload === undefined ? undefined : Buffer.from(m.payload).toString("base64")
  })
  /** What a decoder gives: the message (comparable), or the error's message. */
  const outcome = (decode: (b: Uint8Array) => TaskMessage, b: Uint8Array) => {
    try {
      return { msg: comparable(decode(b)) }
    } catch (e) {
      return { error: (e as Error).message }
    }
  }
  /** What the BinaryReader path gives. */
  const reference = (b: Uint8Array) => outcome(decodeTaskMessageWithReader, b)

  it("reads random messages as the BinaryReader path does, and reads the usual ones itself", () => {
    let direct = 0
    for (let i = 0; i < 2_000; i++) {
      const bytes = encodeTaskMessage(randomMessage())
      const expected = reference(bytes)
      expect(expected.msg).toBeDefined()
      const d = decodeTaskMessageDirect(bytes)
      if (d !== undefined) {
        direct++
        expect(comparable(d)).toEqual(expected.msg)
      }
      expect(outcome(decodeTaskMessage, bytes)).toEqual(expected)
    }
    // Most random messages are usual ones (negative and 2^40 numbers are not).
    expect(direct).toBeGreaterThan(200)
  })

  it("agrees with the BinaryReader path on damaged bytes: the same message, or the same error", () => {
    for (let i = 0; i < 3_000; i++) {
      const bytes = encodeTaskMessage(randomMessage())
      const damaged = bytes.slice(0, rand(3) === 0 ? rand(bytes.length + 1) : bytes.length)
      for (let k = rand(4); k > 0 && damaged.length > 0; k--) damaged[rand(damaged.length)] = rand(256)
      expect(outcome(decodeTaskMessage, damaged)).toEqual(reference(damaged))
    }
  })

  it("leaves unknown fields, wrong wire types and invalid UTF-8 to the BinaryReader path", () => {
    const usual = encodeTaskMessage({
      ...randomMessage(),
      retry: 3,
      retried: 0,
      timeout: 0,
      deadline: 0,
      lastFailedAt: 0,
      retention: 0,
      completedAt: 0
    })
    const withUnknown = new Uint8Array([...usual, 0x80, 0x01, 0x01]) // field 16, varint 1
    const wrongWireType = new Uint8Array([...usual, 0x2a, 0x01, 0x41]) // field 5 as length-delimited
    const badUtf8 = new Uint8Array([0x0a, 0x02, 0xc3, 0x28]) // type: an invalid 2-byte sequence
    expect(decodeTaskMessageDirect(withUnknown)).toBeUndefined()
    expect(decodeTaskMessage(withUnknown)).toEqual(decodeTaskMessageWithReader(withUnknown))
    expect(decodeTaskMessageDirect(wrongWireType)).toBeUndefined()
    expect(decodeTaskMessage(wrongWireType)).toEqual(decodeTaskMessageWithReader(wrongWireType))
    expect(decodeTaskMessageDirect(badUtf8)).toBeUndefined()
    expect(() => decodeTaskMessage(badUtf8)).toThrow(MessageDecodeError)
  })
})
