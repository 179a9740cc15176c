/**
 * The pieces of Upstash's Redis REST protocol this package speaks, and how script arguments that
 * are bytes travel over it.
 *
 * Protocol (https://upstash.com/docs/redis/features/restapi): a command is a JSON array of its
 * name and arguments, POSTed to the REST URL with `Authorization: Bearer <token>`; the answer is
 * `{"result": …}` or `{"error": "…"}`. Several commands POSTed to `<url>/pipeline` as an array of
 * arrays are run in order and answered with an array of those objects. With the request header
 * `Upstash-Encoding: base64` every bulk string of the answer comes back base64-encoded, so bytes
 * survive JSON (a protobuf task message is rarely valid UTF-8).
 *
 * Arguments are JSON strings, which the server turns into UTF-8: bytes that are not valid UTF-8
 * cannot be sent as they are. Script arguments that are bytes are therefore sent base64-encoded,
 * and every script runs behind a short Lua prelude that decodes them back before the script's own
 * code starts: ARGV is prefixed with the number of encoded arguments and their positions, which
 * the prelude removes, so the script sees exactly the ARGV the TCP transport sends and writes the
 * same bytes (a Go asynq server reads them).
 */

/** Decodes the base64 arguments named by ARGV's prefix (count, then 1-based positions) and removes the prefix. */
const prelude = `do
  local count = tonumber(table.remove(ARGV, 1))
  if count > 0 then
    local positions = {}
    for j = 1, count do positions[j] = tonumber(table.remove(ARGV, 1)) end
    local value = {}
    local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i = 1, 64 do value[string.byte(alphabet, i)] = i - 1 end
    for _, p in ipairs(positions) do
      local s = ARGV[p]
      local out = {}
      for i = 1, #s, 4 do
        local a, b, c, d = string.byte(s, i, i + 3)
        local n = value[a] * 262144 + value[b] * 4096 + (value[c] or 0) * 64 + (value[d] or 0)
        local b1, b2, b3 = math.floor(n / 65536), math.floor(n / 256) % 256, n % 256
        if c == 61 then out[#out + 1] = string.char(b1)
        elseif d == 61 then out[#out + 1] = string.char(b1, b2)
        else out[#out + 1] = string.char(b1, b2, b3) end
      end
      ARGV[p] = table.concat(out)
    end
  end
end
`

/** A script as sent over HTTP: its first line (which names it in Redis's error replies), the prelude, the rest. */
export const withPrelude = (source: string): string => {
  const nl = source.indexOf("\n")
  return nl < 0 ? `${source}\n${prelude}` : `${source.slice(0, nl + 1)}${prelude}${source.slice(nl + 1)}`
}

/** Bytes as base64 (btoa exists in every runtime this targets). */
export const toBase64 = (bytes: Uint8Array): string => {
  let s = ""
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

/** base64 as bytes. */
export const fromBase64 = (text: string): Uint8Array => {
  const s = atob(text)
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}

/** A script's ARGV as sent over HTTP: the prefix (count and positions of the base64 arguments), then every argument as text. */
export const encodeScriptArgs = (args: ReadonlyArray<string | number | Uint8Array>): Array<string> => {
  const positions: Array<string> = []
  const out: Array<string> = []
  args.forEach((a, i) => {
    if (a instanceof Uint8Array) {
      positions.push(String(i + 1))
      out.push(toBase64(a))
    } else out.push(String(a))
  })
  return [String(positions.length), ...positions, ...out]
}

const decoder = new TextDecoder()

/**
 * A `result` of a base64-encoded answer as the TCP transport would give it: integers as numbers,
 * nil as null, arrays element by element, bulk strings as bytes (`buffers`) or UTF-8 text. "OK"
 * (a status reply) is not encoded by the server.
 */
export const decodeResult = (result: unknown, buffers: boolean): unknown => {
  if (typeof result === "string") {
    if (result === "OK") return result
    const bytes = fromBase64(result)
    return buffers ? bytes : decoder.decode(bytes)
  }
  if (Array.isArray(result)) return result.map((r) => decodeResult(r, buffers))
  return result
}
