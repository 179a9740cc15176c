/** One HTTP request as curl sends it: a fresh connection to 127.0.0.1 with exactly the Host header given. */
import { request as httpRequest } from "node:http"

export interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

export const rawHttp = (
  port: number,
  host: string,
  path: string,
  method = "GET",
  headers: Record<string, string> = {}
): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path, method, headers: { host, ...headers }, agent: false },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      }
    )
    req.on("error", reject)
    req.end()
  })
