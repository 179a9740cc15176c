import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { newTaskId } from "../../src/steps/taskId.js"
import { taskInfoFromMessage } from "../../src/steps/taskInfo.js"
import { decodePayload, encodePayload, payloadJson, payloadText } from "../../src/wire/payload.js"
import { emptyTaskMessage } from "../../src/wire/TaskMessage.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import { loadFixture } from "../support/fixtures.js"

const utf8 = (s: string) => new TextEncoder().encode(s)

describe("payload codec", () => {
  it("encodes bytes as is, strings as UTF-8, undefined as nil, typed arrays by their bytes, the rest as JSON", () => {
    const u8 = new Uint8Array([1, 2, 3])
    expect(encodePayload(u8)).toBe(u8)
    expect(Array.from(encodePayload(Buffer.from("ab"))!)).toEqual([97, 98])
    expect(encodePayload("名前")).toEqual(utf8("名前"))
    expect(encodePayload("")).toEqual(new Uint8Array(0))
    expect(encodePayload(undefined)).toBeUndefined()
    expect(encodePayload(new Uint16Array([1]))).toEqual(new Uint8Array([1, 0]))
    expect(encodePayload(new Uint8Array([5, 6]).buffer)).toEqual(new Uint8Array([5, 6]))
    expect(encodePayload({ a: 1, d: new Date(0) })).toEqual(utf8('{"a":1,"d":"1970-01-01T00:00:00.000Z"}'))
    expect(encodePayload(false)).toEqual(utf8("false"))
  })
  it("refuses values with no JSON form, with a clear error", () => {
    expect(() => encodePayload(() => 1)).toThrow(
      "payload of type function has no JSON form; pass a string, a Uint8Array or a JSON value"
    )
    expect(() => encodePayload(1n)).toThrow(/^payload cannot be serialized as JSON: /)
  })
  it("reads back text and JSON; nil payload is '' / undefined", () => {
    expect(payloadText(utf8("héllo"))).toBe("héllo")
    expect(payloadText(undefined)).toBe("")
    expect(payloadJson(encodePayload({ x: [1, "y"] }))).toEqual({ x: [1, "y"] })
    expect(payloadJson(undefined)).toBeUndefined()
  })
  it("fails with PayloadDecodeError on bad JSON or bad UTF-8", async () => {
    expect(() => payloadJson(utf8("{nope"))).toThrow(/^payload is not valid JSON \(.+\): "\{nope"$/)
    expect(() => payloadText(new Uint8Array([0xff, 0xfe]))).toThrow("payload (2 bytes) is not valid UTF-8 text")
    const e = await Effect.runPromise(Effect.flip(decodePayload(utf8("[1,"))))
    expect(e._tag).toBe("PayloadDecodeError")
    expect(await Effect.runPromise(decodePayload(utf8('{"ok":true}')))).toEqual({ ok: true })
  })
})

describe("uniqueKey", () => {
  interface Case {
    queue: string
    type: string
    payload: string | null
    unique_key: string
    note: string
  }
  const { cases } = loadFixture<{ cases: ReadonlyArray<Case> }>("unique-keys.json")
  it.each(cases.map((c) => [c.note, c] as const))("matches asynq's base.UniqueKey: %s", (_, c) => {
    const payload = c.payload === null ? undefined : new Uint8Array(Buffer.from(c.payload, "base64"))
    expect(uniqueKey(c.queue, c.type, payload)).toBe(c.unique_key)
  })
})

describe("task ids", () => {
  it("are 13 base62 characters, different every time, with every character used", () => {
    const ids = Array.from({ length: 2000 }, newTaskId)
    for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z]{13}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids.join("")).size).toBe(62)
  })
})

describe("taskInfoFromMessage", () => {
  it("converts asynq's seconds to ms / Dates and zero times to undefined", () => {
    const info = taskInfoFromMessage(
      {
        ...emptyTaskMessage,
        type: "t",
        id: "i",
        queue: "q",
        retry: 3,
        retried: 1,
        errorMsg: "boom",
        timeout: 60,
        deadline: 0,
        lastFailedAt: 1_700_000_000,
        retention: 10,
        completedAt: 0,
        groupKey: "g"
      },
      "retry",
      { nextProcessAt: new Date(5000) }
    )
    expect(info).toEqual({
      id: "i",
      queue: "q",
      type: "t",
      payload: undefined,
      headers: {},
      state: "retry",
      maxRetry: 3,
      retried: 1,
      lastErr: "boom",
      lastFailedAt: new Date(1_700_000_000_000),
      timeoutMs: 60_000,
      deadline: undefined,
      group: "g",
      nextProcessAt: new Date(5000),
      isOrphaned: false,
      retentionMs: 10_000,
      completedAt: undefined,
      result: undefined
    })
  })
})
