/**
 * The stored form of an exit (src/workflow/codec.ts): a success is written and read without the
 * schema, and must be exactly what the schema writes and reads (the Redis format is unchanged).
 */
import { Cause, Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Activity } from "effect/workflow"
import { activityCodecsOf, decodeExit, encodeExit } from "../../src/workflow/codec.js"
import { withSyncSha256 } from "../../src/workflow/digest.js"

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

describe("activity codecs (built once per schema pair)", () => {
  const Failure = Schema.Struct({ code: Schema.Number, at: Schema.Date })
  const make = (execute: Effect.Effect<Date, { code: number; at: Date }>) =>
    Activity.make({ name: "a", success: Schema.Date, error: Failure, execute })
  const at = new Date(86_400_000)
  const outcomes = [Effect.succeed(at), Effect.fail({ code: 7, at }), Effect.die("boom")]

  it("encodes as the activity's executeEncoded and decodes as its exitSchemaPartial", () => {
    for (const outcome of outcomes) {
      const activity = make(outcome)
      const codecs = activityCodecsOf(activity)!
      const ours = Effect.runSync(
        Effect.exit(codecs.executeEncoded(activity)) as Effect.Effect<Exit.Exit<unknown, unknown>>
      )
      const theirs = Effect.runSync(Effect.exit(activity.executeEncoded as Effect.Effect<unknown, unknown>))
      expect(ours).toStrictEqual(theirs)
      expect(Effect.runSync(codecs.decodeExit(ours))).toStrictEqual(
        Effect.runSync(Schema.decodeEffect(activity.exitSchemaPartial)(ours as never))
      )
    }
  })

  it("are shared by activities with the same schemas", () => {
    expect(activityCodecsOf(make(Effect.succeed(at)))).toBe(activityCodecsOf(make(Effect.succeed(at))))
    expect(activityCodecsOf({ executeEncoded: Effect.void })).toBeUndefined()
  })
})

describe("synchronous SHA-256 for execution ids", () => {
  it("gives Web Crypto's digest for SHA-256 and hands other algorithms and members to the Crypto", async () => {
    const crypto = withSyncSha256(globalThis.crypto)!
    for (const text of ["", "abc", "5:Flow3:12345", "é☃𝄞".repeat(40)]) {
      const data = new TextEncoder().encode(text)
      for (const algorithm of ["SHA-256", { name: "sha-256" }, "SHA-1"])
        expect(new Uint8Array(await crypto.subtle.digest(algorithm as never, data))).toEqual(
          new Uint8Array(await globalThis.crypto.subtle.digest(algorithm as never, data))
        )
    }
    expect(crypto.getRandomValues(new Uint8Array(8))).toHaveLength(8)
  })
})
