/**
 * `dash`: the web dashboard (adapters/dashboard) on 127.0.0.1 unless --host says otherwise,
 * read-only unless --allow-actions, protected by --token (or EFFECT_ASYNQ_DASH_TOKEN) when given,
 * answering only localhost, IP addresses, the --host name and each --allowed-host. Checks its
 * options (exit 2: a malformed --allowed-host, actions on a non-loopback --host without a token),
 * then Redis (exit 1 when it does not answer), prints the URL, serves until SIGINT/SIGTERM and then
 * closes the server and the connection (exit 0).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { InvalidArgument } from "../../../src/broker/errors.js"
import { ping } from "../../../src/broker/ping.js"
import { isLoopback, parseAllowedHosts } from "../../dashboard/hosts.js"
import { serveDashboard, serveOptionsProblem } from "../../dashboard/nodeServer.js"
import { withBroker } from "../connect.js"
import { redisTarget } from "../globalFlags.js"
import { takeOverSignals } from "../signals.js"

export const tokenEnvVar = "EFFECT_ASYNQ_DASH_TOKEN"

export const dash = Command.make(
  "dash",
  {
    port: Flag.Int("port").pipe(
      Flag.withDescription("Port to listen on (default 8080; 0: any free port)"),
      Flag.withDefault(8080)
    ),
    host: Flag.String("host").pipe(
      Flag.withDescription("Interface to bind (default 127.0.0.1: this machine only; 0.0.0.0 for every interface)"),
      Flag.withDefault("127.0.0.1")
    ),
    token: Flag.String("token").pipe(
      Flag.withDescription(
        `Require this token (Authorization: Bearer, or the login form in the browser; required with --allow-actions on a --host other machines reach); default: $${tokenEnvVar}, else no token`
      ),
      Flag.optional
    ),
    allowActions: Flag.Boolean("allow-actions").pipe(
      Flag.withDescription("Allow run/archive/delete/cancel/pause (default: read-only)"),
      Flag.withDefault(false)
    ),
    basePath: Flag.String("base-path").pipe(
      Flag.withDescription("Serve under this path, e.g. /dash (default: /)"),
      Flag.withDefault("/")
    ),
    allowedHosts: Flag.String("allowed-host").pipe(
      Flag.withDescription(
        "Also answer requests for this host name (repeatable), e.g. the name a reverse proxy passes; localhost and IP addresses are always answered"
      ),
      Flag.atLeast(0)
    )
  },
  (a) =>
    Effect.gen(function* () {
      if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535)
        return yield* new InvalidArgument({ field: "port", message: `--port must be 0..65535, got ${a.port}` })
      const token = Option.isSome(a.token) ? a.token.value : process.env[tokenEnvVar]
      if (token !== undefined && token.trim() === "")
        return yield* new InvalidArgument({
          field: "token",
          message: `the token is empty (--token or $${tokenEnvVar}); give a non-empty one or leave both unset`
        })
      const allowedHosts = yield* Effect.try({
        try: () => parseAllowedHosts(a.allowedHosts, "--allowed-host"),
        catch: (e) =>
          e instanceof InvalidArgument ? e : new InvalidArgument({ field: "allowedHosts", message: String(e) })
      })
      const options = {
        port: a.port,
        host: a.host,
        allowActions: a.allowActions,
        basePath: a.basePath,
        allowedHosts,
        ...(token !== undefined ? { token } : {})
      }
      const unsafe = serveOptionsProblem(options)
      if (unsafe !== undefined) return yield* unsafe
      const redis = yield* redisTarget
      // Fail fast (exit 1) when Redis does not answer, like every other command.
      yield* withBroker(ping())
      takeOverSignals()
      const stopped = new Promise<NodeJS.Signals>((resolve) => {
        process.once("SIGINT", () => resolve("SIGINT"))
        process.once("SIGTERM", () => resolve("SIGTERM"))
      })
      const server = yield* Effect.tryPromise({
        try: () => serveDashboard({ redis, ...options }),
        catch: (e) =>
          e instanceof InvalidArgument
            ? e
            : new InvalidArgument({
                field: "port",
                message: `cannot listen on ${a.host}:${a.port}: ${e instanceof Error ? e.message : String(e)}`
              })
      })
      const mode = a.allowActions ? "actions allowed" : "read-only"
      process.stdout.write(
        `effect-asynq dashboard: ${server.url} (${mode}${token !== undefined ? ", token required" : ""})\n`
      )
      if (token === undefined && !isLoopback(a.host))
        process.stderr.write(
          `effect-asynq: warning: the dashboard listens on ${a.host} without a token; anyone who can reach it can read your tasks\n`
        )
      const signal = yield* Effect.promise(() => stopped)
      process.stdout.write(`${signal}: stopping the dashboard\n`)
      yield* Effect.promise(() => server.close())
    })
).pipe(
  Command.withDescription(
    "Serve the web dashboard (queues, tasks, servers, cron, Redis; asynqmon-compatible JSON API and /metrics)"
  )
)
