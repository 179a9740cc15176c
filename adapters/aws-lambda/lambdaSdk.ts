/**
 * `@aws-sdk/client-lambda` is an optional peer dependency: only the dispatcher and
 * `invokeLambdaTask` call Lambda. Those modules import the SDK here, at first use, so no other
 * entry point loads it, and when it is not installed the error says which package to install.
 * (A bundler still bundles it into the functions that use it: the specifier is a literal.)
 */
import type * as LambdaSdk from "@aws-sdk/client-lambda"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

const lambdaSdkPackage = "@aws-sdk/client-lambda"

/** An entry point needs an optional peer dependency that the app has not installed. */
export class MissingPeerDependency extends Data.TaggedError("MissingPeerDependency")<{
  readonly packageName: string
  /** The effect-asynq entry point that needs it. */
  readonly neededBy: string
  readonly message: string
}> {}

/** Node's "Cannot find package '<name>' imported from …" for this package (not for one of its own dependencies). */
const isLambdaSdkMissing = (cause: unknown): boolean =>
  cause instanceof Error &&
  (cause as { readonly code?: unknown }).code === "ERR_MODULE_NOT_FOUND" &&
  cause.message.includes(`'${lambdaSdkPackage}'`)

const missingLambdaSdk = (neededBy: string) =>
  new MissingPeerDependency({
    packageName: lambdaSdkPackage,
    neededBy,
    message: `${neededBy} needs ${lambdaSdkPackage}: npm install ${lambdaSdkPackage}`
  })

/** The SDK module; rejects with MissingPeerDependency when it is not installed. Node caches the module. */
export const importLambdaSdk = (neededBy: string): Promise<typeof LambdaSdk> =>
  import("@aws-sdk/client-lambda").catch((cause: unknown) => {
    throw isLambdaSdkMissing(cause) ? missingLambdaSdk(neededBy) : cause
  })

/** The SDK module as an Effect: MissingPeerDependency when it is not installed; any other load failure is a defect. */
export const lambdaSdk = (neededBy: string): Effect.Effect<typeof LambdaSdk, MissingPeerDependency> =>
  Effect.tryPromise({ try: () => import("@aws-sdk/client-lambda"), catch: (cause) => cause }).pipe(
    Effect.catch((cause) => (isLambdaSdkMissing(cause) ? Effect.fail(missingLambdaSdk(neededBy)) : Effect.die(cause)))
  )
