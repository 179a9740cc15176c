/** The HTTP enqueue body, validated by hand (no Schema in the enqueue bundles): every issue listed, each naming its field. */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { parseEnqueueBody } from "../../adapters/shared/enqueueBody.js"

const problem = (raw: string) => Effect.runPromise(Effect.flip(parseEnqueueBody(raw)))

describe("enqueue body validation", () => {
  it("accepts every documented field", async () => {
    const body = {
      type: "email:welcome",
      payload: { to: "a@b.c" },
      options: {
        queue: "email",
        maxRetry: 0,
        timeout: 1,
        deadline: "2030-01-01T00:00:00Z",
        unique: 60000,
        processIn: 0,
        taskId: "t1",
        retention: 0,
        group: "g",
        headers: { a: "b" }
      }
    }
    expect(await Effect.runPromise(parseEnqueueBody(JSON.stringify(body)))).toEqual(body)
    expect(
      await Effect.runPromise(
        parseEnqueueBody(JSON.stringify({ type: "x", payloadBase64: "AAE=", options: { processAt: 1700000000000 } }))
      )
    ).toMatchObject({ type: "x" })
  })

  it("lists every issue in one 400, naming each field", async () => {
    const p = await problem(
      JSON.stringify({
        type: 7,
        payloadBase64: 3,
        extra: true,
        options: { maxRetry: -1, timeout: 0, deadline: -5, qeue: "typo", headers: { a: 1 } }
      })
    )
    expect(p.status).toBe(400)
    expect(p.code).toBe("invalid_body")
    for (const fragment of [
      "type: expected a non-empty string, got 7",
      "payloadBase64: expected a string, got 3",
      "extra: unknown field",
      "options.maxRetry: expected a whole number >= 0, got -1",
      "options.timeout: expected a whole number >= 1, got 0",
      "options.deadline: expected unix milliseconds",
      "options.qeue: unknown field",
      'options.headers: expected an object of strings, but "a" is 1'
    ])
      expect(p.message).toContain(fragment)
  })

  it("says what is wrong with a body that is not an object, a missing type, options of the wrong kind", async () => {
    expect((await problem("[1]")).message).toBe(
      'invalid request body: expected a JSON object with a "type", got an array'
    )
    expect((await problem("{}")).message).toBe("invalid request body: type: missing (expected a non-empty string)")
    expect((await problem(JSON.stringify({ type: "x", options: [] }))).message).toBe(
      "invalid request body: options: expected an object, got an array"
    )
    expect((await problem(JSON.stringify({ type: "x", options: { maxRetry: 1.5 } }))).message).toContain(
      "options.maxRetry: expected a whole number >= 0, got 1.5"
    )
    expect((await problem("{not json")).code).toBe("invalid_json")
  })
})
