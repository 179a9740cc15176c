import { describe, expect, it } from "vitest"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import { fromB64, loadFixture } from "../support/fixtures.js"

interface Case {
  readonly queue: string
  readonly type: string
  readonly payload: string | null
  readonly note: string
  readonly unique_key: string
}
const cases = loadFixture<{ cases: ReadonlyArray<Case> }>("unique-keys.json").cases

describe("uniqueKey = asynq's base.UniqueKey", () => {
  it("covers all 9 cases", () => {
    expect(cases).toHaveLength(9)
  })

  it.each(cases.map((c) => [c.note, c] as const))("%s", (_, c) => {
    expect(uniqueKey(c.queue, c.type, fromB64(c.payload))).toBe(c.unique_key)
  })

  it("tells a nil payload (key ends in ':') from an empty one (md5 of nothing)", () => {
    expect(uniqueKey("q", "t", undefined)).toBe("asynq:{q}:unique:t:")
    expect(uniqueKey("q", "t", new Uint8Array())).toBe("asynq:{q}:unique:t:d41d8cd98f00b204e9800998ecf8427e")
  })
})
