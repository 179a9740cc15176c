/**
 * Prometheus text of the current context's metrics (`metricsText`), and a small HTTP server that
 * serves it at `/metrics` (`serveMetrics`): the worker's `metrics: { port }` option and the
 * `--metrics-port` flag. Extra text (e.g. queue metrics read from Redis at scrape time) can be
 * appended by an Effect run at each scrape.
 */
import { prometheusContentType } from "./queueMetrics.js"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import type { Broker } from "../broker/Broker.js"
import { InvalidArgument } from "../broker/errors.js"

/** The content type of Prometheus' text exposition format 0.0.4. */

/** Every metric in the context's MetricRegistry as Prometheus text, then `extra`'s text (a failure is logged and left out). */
export const metricsText = <R = never>(extra?: Effect.Effect<string, unknown, R>): Effect.Effect<string, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) => {
    const own = PrometheusMetrics.formatUnsafe(context as Context.Context<never>)
    if (extra === undefined) return Effect.succeed(own)
    return extra.pipe(
      Effect.map((more) => (more === "" ? own : own + (more.endsWith("\n") ? more : more + "\n"))),
      Effect.catchCause((cause) =>
        Effect.logWarning("metrics: the extra metrics failed; left out of this scrape", cause).pipe(Effect.as(own))
      )
    )
  })

/** Where `serveMetrics` listens, and Prometheus text to append to each scrape. */
export interface MetricsEndpointOptions<R = never> {
  /** The port (0: any free port). */
  readonly port: number
  /** The address (default 127.0.0.1). */
  readonly host?: string | undefined
  /** More Prometheus text appended to each scrape. */
  readonly extra?: Effect.Effect<string, unknown, R> | undefined
}

/** Where the worker serves its metrics as Prometheus text (the Server's `metrics` option). */
export interface MetricsOptions {
  /** Serve `/metrics` on this port (0: any free port; the handle's `metricsUrl` says which). Without it metrics are recorded, not served. */
  readonly port?: number
  /** The address to listen on (default 127.0.0.1; "0.0.0.0" for a scraper on another host). */
  readonly host?: string
  /** More Prometheus text appended to every scrape (e.g. queue sizes read from Redis at scrape time); a failure is logged and left out. */
  readonly extra?: Effect.Effect<string, unknown, Broker>
}

/** A running `/metrics` endpoint: its URL and port. */
export interface MetricsEndpoint {
  /** e.g. http://127.0.0.1:9464/metrics */
  readonly url: string
  readonly port: number
}

/**
 * Serves `GET /metrics` (Prometheus text of this context's metrics, plus `extra`) until the scope
 * closes. Fails with InvalidArgument (`metrics.port`) when it cannot listen there.
 */
export const serveMetrics = <R = never>(
  options: MetricsEndpointOptions<R>
): Effect.Effect<MetricsEndpoint, InvalidArgument, R | Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
      return yield* new InvalidArgument({
        field: "metrics.port",
        message: `the metrics port must be a whole number from 0 to 65535, got ${options.port}`
      })
    }
    const context = yield* Effect.context<R>()
    const scrape = metricsText(options.extra)
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? "/").split("?")[0]
      if (path !== "/metrics") {
        res
          .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
          .end("not found: the metrics are at /metrics\n")
        return
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        res
          .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
          .end("method not allowed\n")
        return
      }
      Effect.runPromiseWith(context)(scrape).then(
        (body) =>
          res.writeHead(200, { "content-type": prometheusContentType }).end(req.method === "HEAD" ? undefined : body),
        (e) => res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`metrics failed: ${String(e)}\n`)
      )
    }
    const server = yield* Effect.acquireRelease(
      Effect.callback<Server, InvalidArgument>((resume) => {
        const s = createServer(onRequest)
        const onError = (e: Error) =>
          resume(
            Effect.fail(
              new InvalidArgument({
                field: "metrics.port",
                message: `cannot serve metrics on ${host}:${options.port}: ${e.message}`
              })
            )
          )
        s.once("error", onError)
        s.listen(options.port, host, () => {
          s.removeListener("error", onError)
          resume(Effect.succeed(s))
        })
      }),
      (s) =>
        Effect.callback<void>((resume) => {
          s.close(() => resume(Effect.void))
          s.closeAllConnections()
        })
    )
    const port = (server.address() as AddressInfo).port
    const shownHost = host.includes(":") ? `[${host}]` : host
    return { url: `http://${shownHost}:${port}/metrics`, port }
  })
