/**
 * How workflow state is stored as JSON in the execution hash: activity and deferred exits (their
 * values already encoded by effect's workflow module), payloads and results (encoded with the
 * workflow's own schemas, as the cluster engine does).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Workflow from "effect/workflow/Workflow"

const AnyOrVoid = Schema.Union([Schema.Undefined, Schema.Any])
const ExitJson = Schema.toCodecJson(Schema.Exit(AnyOrVoid, AnyOrVoid, Schema.Defect()))
const encodeExitSync = Schema.encodeSync(ExitJson)
const decodeExitSync = Schema.decodeUnknownSync(ExitJson)

/**
 * An exit whose values are JSON-encoded already (an activity's or a deferred's), as JSON text. A
 * success is written directly: `{"_tag":"Success","value":…}` with undefined as null, the same
 * text the schema writes (its value schema passes a JSON value through), without running it.
 */
export const encodeExitText = (exit: Exit.Exit<unknown, unknown>): string =>
  exit._tag === "Success"
    ? JSON.stringify({ _tag: "Success", value: exit.value === undefined ? null : exit.value })
    : JSON.stringify(encodeExitSync(exit))

/** `encodeExitText` as an Effect. */
export const encodeExit = (exit: Exit.Exit<unknown, unknown>): Effect.Effect<string> =>
  Effect.sync(() => encodeExitText(exit))

/**
 * The exit stored by `encodeExit`. A success is read directly (null as undefined, as the schema
 * reads it); anything else goes through the schema. A stored exit that cannot be read is a defect
 * (the hash was written by something else).
 */
export const decodeExitText = (json: string): Exit.Exit<unknown, unknown> => {
  const parsed: unknown = JSON.parse(json)
  if (
    typeof parsed === "object" &&
    parsed !== null &&
    (parsed as { _tag?: unknown })._tag === "Success" &&
    "value" in parsed &&
    Object.keys(parsed).length === 2
  ) {
    const value = (parsed as { value: unknown }).value
    return Exit.succeed(value === null ? undefined : value)
  }
  return decodeExitSync(parsed) as Exit.Exit<unknown, unknown>
}

/** `decodeExitText` as an Effect. */
export const decodeExit = (json: string): Effect.Effect<Exit.Exit<unknown, unknown>> =>
  Effect.sync(() => decodeExitText(json))

interface Codecs {
  readonly encodePayload: (payload: object) => Effect.Effect<string>
  readonly decodePayload: (json: string) => Effect.Effect<object>
  readonly encodeResult: (result: Workflow.Result<unknown, unknown>) => Effect.Effect<string>
  readonly decodeResult: (json: string) => Effect.Effect<Workflow.Result<unknown, unknown>>
}

const cache = new WeakMap<Workflow.Any, Codecs>()

/** The payload and result codecs of a workflow (built once per workflow). Encoding failures are defects. */
export const codecsOf = (workflow: Workflow.Any): Codecs => {
  let c = cache.get(workflow)
  if (c) return c
  const payload = Schema.toCodecJson(workflow.payloadSchema as unknown as Schema.Codec<object, unknown>)
  const result = Schema.toCodecJson(
    Workflow.Result({ success: workflow.successSchema, error: workflow.errorSchema }) as unknown as Schema.Codec<
      Workflow.Result<unknown, unknown>,
      unknown
    >
  )
  const encP = Schema.encodeEffect(payload)
  const decP = Schema.decodeUnknownEffect(payload)
  const encR = Schema.encodeEffect(result)
  const decR = Schema.decodeUnknownEffect(result)
  c = {
    encodePayload: (p) =>
      Effect.map(Effect.orDie(encP(p) as Effect.Effect<unknown, Schema.SchemaError>), (v) => JSON.stringify(v)),
    decodePayload: (json) =>
      Effect.orDie(Effect.suspend(() => decP(JSON.parse(json))) as Effect.Effect<object, Schema.SchemaError>),
    encodeResult: (r) =>
      Effect.map(Effect.orDie(encR(r) as Effect.Effect<unknown, Schema.SchemaError>), (v) => JSON.stringify(v)),
    decodeResult: (json) =>
      Effect.orDie(
        Effect.suspend(() => decR(JSON.parse(json))) as Effect.Effect<
          Workflow.Result<unknown, unknown>,
          Schema.SchemaError
        >
      )
  }
  cache.set(workflow, c)
  return c
}

/** An activity as `Activity.make` builds it: its schemas and its plain execution. */
interface ActivityWithSchemas {
  readonly successSchema: Schema.Top
  readonly errorSchema: Schema.Top
  readonly execute: Effect.Effect<unknown, unknown, unknown>
}

/** The JSON codecs of an activity's results, built once per (success, error) schema pair. */
export interface ActivityCodecs {
  /** The activity's run with its success or failure encoded (as its `executeEncoded`). */
  readonly executeEncoded: (activity: ActivityWithSchemas) => Effect.Effect<unknown, unknown, unknown>
  /** A stored exit (its values JSON) decoded (as the typed engine's decode with `exitSchemaPartial`). */
  readonly decodeExit: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<Exit.Exit<unknown, unknown>>
}

const activityCodecCache = new WeakMap<Schema.Top, WeakMap<Schema.Top, ActivityCodecs>>()

const hasSchemas = (activity: object): activity is ActivityWithSchemas =>
  "successSchema" in activity &&
  "errorSchema" in activity &&
  Effect.isEffect((activity as { execute?: unknown }).execute)

/**
 * The codecs of an activity's results, or undefined for an activity not built by `Activity.make`.
 * effect's own path builds the JSON codecs and the exit schema in every `Activity.make` and
 * compiles them on first use: an activity made inside the workflow (the usual way) pays that on
 * every run. These are built from the activity's schemas, which are usually made once, and kept
 * with them: the same encoding and decoding, compiled once.
 */
export const activityCodecsOf = (activity: object): ActivityCodecs | undefined => {
  if (!hasSchemas(activity)) return undefined
  const { successSchema, errorSchema } = activity
  let byError = activityCodecCache.get(successSchema)
  if (byError === undefined) activityCodecCache.set(successSchema, (byError = new WeakMap()))
  let c = byError.get(errorSchema)
  if (c !== undefined) return c
  const successJson = Schema.toCodecJson(successSchema as Schema.Codec<unknown, unknown>)
  const errorJson = Schema.toCodecJson(errorSchema as Schema.Codec<unknown, unknown>)
  const encodeSuccess = Schema.encodeEffect(successJson)
  const encodeError = Schema.encodeEffect(errorJson)
  const decodeExit = Schema.decodeEffect(Schema.Exit(successJson, errorJson, Schema.Unknown)) as unknown as (
    exit: Exit.Exit<unknown, unknown>
  ) => Effect.Effect<Exit.Exit<unknown, unknown>, Schema.SchemaError>
  const onFailure = (error: unknown) =>
    Effect.flatMap(Effect.orDie(encodeError(error) as Effect.Effect<unknown, Schema.SchemaError>), Effect.fail)
  const onSuccess = (value: unknown) => Effect.orDie(encodeSuccess(value) as Effect.Effect<unknown, Schema.SchemaError>)
  c = {
    executeEncoded: (a) => Effect.matchEffect(a.execute, { onFailure, onSuccess }),
    // As the typed engine: undefined values as null before the decode.
    decodeExit: (exit) => Effect.orDie(decodeExit(Exit.map(exit, (v) => v ?? null)))
  }
  byError.set(errorSchema, c)
  return c
}
