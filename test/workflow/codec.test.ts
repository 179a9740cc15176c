/**
 * The stored form of an exit (src/workflow/codec.ts): a success is written and read without the
 * schema, and must be exactly what the schema writes and reads (the Redis format is unchanged).
 */
import { Cause, Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { decodeExit, encodeExit } from "../../src/workflow/codec.js"

const AnyOrVoid = Schema.Union([Schema.Undefined, Schema.Any])
const ExitJson = Schema.toCodecJson(Schema.Exit(AnyOrVoid, AnyOrVoid, Schema.Defect()))
const bySchema = (exit: Exit.Exit<unknown, unknown>) => JSON.stringify(Schema.encodeSync(ExitJson)(exit))
const schemaRead = (json: string) => Schema.decodeUnknownSync(ExitJson)(JSON.parse(json))

const values: ReadonlyArray<unknown> = [
  1,
  0,
  Number.NaN,
  undefined,
  null,
  "",
  "text",
  true,
  { a: 1, b: undefined },
  [1, undefined, null],
  { nested: { list: [null, {}], text: "é☃𝄞" } },
  new Date(0)
]

describe("workflow exit codec", () => {
  it("writes a success exactly as the schema does", () => {
    for (const value of values)
      expect(Effect.runSync(encodeExit(Exit.succeed(value)))).toBe(bySchema(Exit.succeed(value)))
  })

  it("writes a failure as the schema does", () => {
    for (const exit of [Exit.fail({ reason: "no" }), Exit.die(new Error("boom")), Exit.failCause(Cause.interrupt(1))])
      expect(Effect.runSync(encodeExit(exit))).toBe(bySchema(exit))
  })

  it("reads what it writes as the schema reads it", () => {
    const exits = [...values.map((v) => Exit.succeed(v)), Exit.fail({ reason: "no" }), Exit.die("boom")]
    for (const exit of exits) {
      const json = Effect.runSync(encodeExit(exit))
      expect(Effect.runSync(decodeExit(json))).toStrictEqual(schemaRead(json))
    }
  })

  it("leaves a stored exit of another shape to the schema (a defect when it does not read)", () => {
    expect(() => Effect.runSync(decodeExit('{"_tag":"Success"}'))).toThrow()
    expect(Effect.runSync(decodeExit('{"_tag":"Success","value":{"x":null}}'))).toStrictEqual(Exit.succeed({ x: null }))
  })
})
