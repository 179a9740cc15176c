/**
 * The body of an HTTP enqueue request, validated by hand (no Schema: the enqueue-only bundles stay
 * small). Every issue found is listed in one 400 answer, each naming its field.
 */
import * as Effect from "effect/Effect"
import { badRequest, type HttpProblem } from "./httpProblem.js"

/** The options an HTTP caller may set; durations are milliseconds (the same names as EnqueueOptions). */
export interface EnqueueBodyOptions {
  readonly queue?: string
  readonly maxRetry?: number
  readonly timeout?: number
  /** A point in time: unix milliseconds or an ISO-8601 string. */
  readonly deadline?: number | string
  readonly unique?: number
  readonly processAt?: number | string
  readonly processIn?: number
  readonly taskId?: string
  readonly retention?: number
  readonly group?: string
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * The body of an enqueue request. `payload` is any JSON value (a string is sent as its UTF-8
 * bytes, anything else as JSON text); `payloadBase64` carries raw bytes instead.
 */
export interface EnqueueBody {
  readonly type: string
  readonly payload?: unknown
  readonly payloadBase64?: string
  readonly options?: EnqueueBodyOptions
}

type Check = (v: unknown) => string | undefined
const describe = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "an array"
      : typeof v === "string"
        ? JSON.stringify(v)
        : typeof v === "object"
          ? "an object"
          : String(v)
const nonEmpty: Check = (v) =>
  typeof v === "string" && v.length > 0 ? undefined : `expected a non-empty string, got ${describe(v)}`
const wholeAtLeast =
  (min: number): Check =>
  (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= min
      ? undefined
      : `expected a whole number >= ${min}, got ${describe(v)}`
const instant: Check = (v) =>
  (typeof v === "number" && Number.isInteger(v) && v >= 0) || (typeof v === "string" && v.length > 0)
    ? undefined
    : `expected unix milliseconds (a whole number >= 0) or an ISO-8601 string, got ${describe(v)}`
const stringRecord: Check = (v) => {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    return `expected an object of strings, got ${describe(v)}`
  const bad = Object.entries(v).find(([, x]) => typeof x !== "string")
  return bad === undefined ? undefined : `expected an object of strings, but "${bad[0]}" is ${describe(bad[1])}`
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const optionChecks: Readonly<Record<keyof EnqueueBodyOptions, Check>> = {
  queue: nonEmpty,
  maxRetry: wholeAtLeast(0),
  timeout: wholeAtLeast(1),
  deadline: instant,
  unique: wholeAtLeast(1),
  processAt: instant,
  processIn: wholeAtLeast(0),
  taskId: nonEmpty,
  retention: wholeAtLeast(0),
  group: nonEmpty,
  headers: stringRecord
}
const bodyChecks: Readonly<Record<Exclude<keyof EnqueueBody, "options">, Check>> = {
  type: nonEmpty,
  payload: () => undefined,
  payloadBase64: (v) => (typeof v === "string" ? undefined : `expected a string, got ${describe(v)}`)
}

/** Every issue of one object against its checks: wrong values, unknown fields (a typo must not be ignored). */
const issuesOf = (
  at: string,
  o: Record<string, unknown>,
  checks: Readonly<Record<string, Check>>,
  issues: Array<string>
) => {
  for (const [field, value] of Object.entries(o)) {
    const check = checks[field]
    if (check === undefined) {
      if (!(at === "" && field === "options")) issues.push(`${at}${field}: unknown field`)
      continue
    }
    if (value === undefined) continue
    const problem = check(value)
    if (problem !== undefined) issues.push(`${at}${field}: ${problem}`)
  }
}

/** Parses and validates the raw body; a 400 HttpProblem lists every issue found. */
export const parseEnqueueBody = (raw: string): Effect.Effect<EnqueueBody, HttpProblem> =>
  Effect.suspend(() => {
    if (raw.trim() === "")
      return Effect.fail(badRequest('request body is empty: expected a JSON object with a "type"', "invalid_body"))
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch (e) {
      return Effect.fail(
        badRequest(`request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, "invalid_json")
      )
    }
    if (!isObject(json))
      return Effect.fail(
        badRequest(`invalid request body: expected a JSON object with a "type", got ${describe(json)}`, "invalid_body")
      )
    const issues: Array<string> = []
    if (json.type === undefined) issues.push("type: missing (expected a non-empty string)")
    issuesOf("", json, bodyChecks, issues)
    if (json.options !== undefined) {
      if (isObject(json.options)) issuesOf("options.", json.options, optionChecks, issues)
      else issues.push(`options: expected an object, got ${describe(json.options)}`)
    }
    if (issues.length > 0) return Effect.fail(badRequest(`invalid request body: ${issues.join("; ")}`, "invalid_body"))
    const body = json as unknown as EnqueueBody
    if (body.payload !== undefined && body.payloadBase64 !== undefined)
      return Effect.fail(badRequest("give either payload or payloadBase64, not both", "invalid_body"))
    if (body.payloadBase64 !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(body.payloadBase64))
      return Effect.fail(badRequest("payloadBase64 is not valid base64", "invalid_body"))
    return Effect.succeed(body)
  })

/** A point in time from the body (ms or ISO string) as a Date; a 400 if the string is no date. */
export const parseInstant = (field: string, v: number | string): Effect.Effect<Date, HttpProblem> => {
  const d = new Date(v)
  return Number.isNaN(d.getTime())
    ? Effect.fail(
        badRequest(
          `options.${field} is not a date: expected unix milliseconds or an ISO-8601 string, got ${JSON.stringify(v)}`,
          "invalid_body"
        )
      )
    : Effect.succeed(d)
}
