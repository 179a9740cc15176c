import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { badRequest, type HttpProblem } from "./httpProblem.js"

const NonEmpty = Schema.String.check(Schema.isNonEmpty())
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
/** A point in time: unix milliseconds or an ISO-8601 string. */
const Instant = Schema.Union([NonNegativeInt, NonEmpty])

/** The options an HTTP caller may set; durations are milliseconds (the same names as EnqueueOptions). */
export const EnqueueBodyOptions = Schema.Struct({
  queue: Schema.optionalKey(NonEmpty),
  maxRetry: Schema.optionalKey(NonNegativeInt),
  timeout: Schema.optionalKey(PositiveInt),
  deadline: Schema.optionalKey(Instant),
  unique: Schema.optionalKey(PositiveInt),
  processAt: Schema.optionalKey(Instant),
  processIn: Schema.optionalKey(NonNegativeInt),
  taskId: Schema.optionalKey(NonEmpty),
  retention: Schema.optionalKey(NonNegativeInt),
  group: Schema.optionalKey(NonEmpty),
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})

/**
 * The body of an enqueue request. `payload` is any JSON value (a string is sent as its UTF-8
 * bytes, anything else as JSON text); `payloadBase64` carries raw bytes instead.
 */
export const EnqueueBody = Schema.Struct({
  type: NonEmpty,
  payload: Schema.optionalKey(Schema.Unknown),
  payloadBase64: Schema.optionalKey(Schema.String),
  options: Schema.optionalKey(EnqueueBodyOptions)
})
export type EnqueueBody = typeof EnqueueBody.Type

const decode = Schema.decodeUnknownEffect(EnqueueBody)

/** Parses and validates the raw body; a 400 HttpProblem lists every issue found. */
export const parseEnqueueBody = (raw: string): Effect.Effect<EnqueueBody, HttpProblem> =>
  Effect.gen(function* () {
    if (raw.trim() === "") return yield* badRequest("request body is empty: expected a JSON object with a \"type\"", "invalid_body")
    const json = yield* Effect.try({
      try: () => JSON.parse(raw) as unknown,
      catch: (e) => badRequest(`request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, "invalid_json")
    })
    const body = yield* decode(json, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((e) => badRequest(`invalid request body: ${e.message.replace(/\n\s*/g, " ")}`, "invalid_body"))
    )
    if (body.payload !== undefined && body.payloadBase64 !== undefined)
      return yield* badRequest("give either payload or payloadBase64, not both", "invalid_body")
    if (body.payloadBase64 !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(body.payloadBase64))
      return yield* badRequest("payloadBase64 is not valid base64", "invalid_body")
    return body
  })

/** A point in time from the body (ms or ISO string) as a Date; a 400 if the string is no date. */
export const parseInstant = (field: string, v: number | string): Effect.Effect<Date, HttpProblem> => {
  const d = typeof v === "number" ? new Date(v) : new Date(v)
  return Number.isNaN(d.getTime())
    ? Effect.fail(badRequest(`options.${field} is not a date: expected unix milliseconds or an ISO-8601 string, got ${JSON.stringify(v)}`, "invalid_body"))
    : Effect.succeed(d)
}
