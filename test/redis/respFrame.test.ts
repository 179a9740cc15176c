/**
 * respFrame builds a command's RESP bytes in one Buffer: they must be exactly the bytes ioredis
 * writes for the same command (strings as UTF-8, numbers as their decimal text, bytes as they are).
 */
import { Command } from "ioredis"
import { describe, expect, it } from "vitest"
import { respFrame, respFrameAfter, respPrefix } from "../../src/redis/respFrame.js"

const ioredisBytes = (parts: ReadonlyArray<string | number | Uint8Array>): Buffer => {
  const [name, ...rest] = parts
  const w = new Command(
    String(name),
    rest.map((p) => (p instanceof Uint8Array ? Buffer.from(p) : p))
  ).toWritable({})
  return typeof w === "string" ? Buffer.from(w, "utf8") : w
}

describe("respFrame", () => {
  it("writes the bytes ioredis writes for the same command", () => {
    const bytes = new Uint8Array(300).map((_, i) => (i * 37) % 256)
    const cases: Array<[ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string | number | Uint8Array>]> = [
      [
        ["EVALSHA", "a".repeat(40), "2"],
        ["asynq:{q}:t:", "asynq:{q}:pending"],
        ["id1", bytes, "1732500000000000000", "q"]
      ],
      [["EVALSHA", "b".repeat(40), "0"], [], []],
      [
        ["EVALSHA", "c".repeat(40), "1"],
        ["asynq:{é—☃}:t:"],
        ["", new Uint8Array(0), 0, -1, 1.5, 12345678901, "żółć 🎉", "x".repeat(100_000)]
      ],
      [
        ["EVALSHA", "d".repeat(40), "3"],
        ["k1", "k2", "k3"],
        Array.from({ length: 4000 }, (_, i) => (i % 4 === 1 ? bytes.subarray(i % 50) : i % 4 === 2 ? i : `id-${i}`))
      ],
      // ASCII until the last argument (short, then long): the one-pass ASCII frame is abandoned late.
      [
        ["EVALSHA", "e".repeat(40), "2"],
        ["asynq:{q}:t:", "asynq:{q}:pending"],
        ["id1", bytes, "1732500000000000000", "q", "naïve"]
      ],
      [["EVALSHA", "f".repeat(40), "1"], ["asynq:{q}:t:"], ["a".repeat(200), 7, "b".repeat(199) + "é"]],
      // Characters 128-255 are one byte in latin1 but two in UTF-8.
      [["EVALSHA", "g".repeat(40), "1"], ["k\u00ff"], ["\u0080".repeat(70)]]
    ]
    for (const [head, keys, args] of cases) {
      const expected = ioredisBytes([...head, ...keys, ...args])
      expect(respFrame(head, keys, args).equals(expected)).toBe(true)
      // The same frame from a prefix of the head and keys built once.
      expect(respFrameAfter(respPrefix(head, keys), args).equals(expected)).toBe(true)
      // The same bytes written into a reused buffer (a connection's frame buffer), one frame after another.
      expect(respFrame(head, keys, args, reused).equals(expected)).toBe(true)
      expect(respFrameAfter(respPrefix(head, keys), args, reused).equals(expected)).toBe(true)
    }
  })
})

/** Views into one buffer, filled with junk first (the bytes a frame is written into are not zeroed). */
let shared = Buffer.alloc(0)
const reused = (size: number): Buffer => {
  if (shared.length < size) shared = Buffer.allocUnsafeSlow(size * 2)
  return shared.fill(0xa5).subarray(0, size)
}
