/**
 * A real OTLP/HTTP receiver on loopback (a node:http server): it records every request an
 * exporter sends (path and decoded JSON body) and answers 200, as a collector does. Spans and
 * metric data points are read back from the recorded requests.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface OtlpRequest {
  readonly path: string
  readonly contentType: string | undefined
  readonly body: any
}

export interface OtlpAttribute {
  readonly key: string
  readonly value: {
    readonly stringValue?: string
    readonly intValue?: string | number
    readonly boolValue?: boolean
    readonly doubleValue?: number
  }
}

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<OtlpAttribute>
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: ReadonlyArray<OtlpAttribute> }>
  readonly status: { readonly code: number; readonly message?: string }
}

export interface OtlpReceiver {
  /** The base URL (http://127.0.0.1:<port>), as an exporter's `url`. */
  readonly url: string
  readonly requests: Array<OtlpRequest>
  /** Every span received so far. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** The names of every metric received so far. */
  readonly metricNames: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** An attribute's value as a plain JS value. */
export const attributeValue = (attributes: ReadonlyArray<OtlpAttribute>, key: string): unknown => {
  const a = attributes.find((x) => x.key === key)
  if (!a) return undefined
  const v = a.value
  if (v.stringValue !== undefined) return v.stringValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.boolValue !== undefined) return v.boolValue
  return undefined
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const requests: Array<OtlpRequest> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        body = text
      }
      requests.push({ path: req.url ?? "", contentType: req.headers["content-type"], body })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () =>
      requests
        .filter((r) => r.path === "/v1/traces")
        .flatMap((r) =>
          (r.body.resourceSpans ?? []).flatMap((rs: any) => (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? []))
        ),
    metricNames: () =>
      requests
        .filter((r) => r.path === "/v1/metrics")
        .flatMap((r) =>
          (r.body.resourceMetrics ?? []).flatMap((rm: any) =>
            (rm.scopeMetrics ?? []).flatMap((sm: any) => (sm.metrics ?? []).map((m: any) => m.name))
          )
        ),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
