import { describe, expect, it } from "vitest"
import { MessageDecodeError } from "../../src/wire/errors.js"
import { decodeServerInfo, encodeServerInfo } from "../../src/wire/ServerInfo.js"
import { decodeTaskMessage, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { fromHex, hex } from "../support/fixtures.js"
import { asDecoded, serverInfo, taskMessage, vectors } from "./fromFixture.js"

const all = vectors().decode_vectors
const ok = all.filter((v) => v.go_error === undefined)
const bad = all.filter((v) => v.go_error !== undefined)

const codecs = {
  TaskMessage: { decode: decodeTaskMessage, encode: encodeTaskMessage, fromFields: taskMessage },
  ServerInfo: { decode: decodeServerInfo, encode: encodeServerInfo, fromFields: serverInfo }
} as const

describe("decode_vectors: non-canonical bytes, decoded as Go decodes them", () => {
  it("covers all 10 decode vectors (9 decodable, 1 Go rejects)", () => {
    expect(all).toHaveLength(10)
    expect(ok).toHaveLength(9)
    expect(bad).toHaveLength(1)
  })

  it.each(ok.map((v) => [v.name, v] as const))("%s: decodes to what Go's proto.Unmarshal gave", (_, v) => {
    const c = codecs[v.message] as (typeof codecs)["ServerInfo"]
    expect(c.decode(fromHex(v.hex))).toEqual(asDecoded(c.fromFields(v.decoded!)))
  })

  it.each(ok.map((v) => [v.name, v] as const))(
    "%s: re-encodes to Go's bytes (unknown fields dropped, as asynq's rewrite does)",
    (_, v) => {
      const c = codecs[v.message] as (typeof codecs)["ServerInfo"]
      const again = hex(c.encode(c.decode(fromHex(v.hex))))
      // TaskMessage: asynq's DecodeMessage → EncodeMessage round trip. ServerInfo: Go's re-marshal.
      expect(again).toBe(v.asynq_roundtrip_hex ?? v.go_remarshal_hex)
      // Go's generated type keeps unknown fields and appends them after the known ones.
      expect(v.go_remarshal_hex!.startsWith(again)).toBe(true)
    }
  )

  it.each(bad.map((v) => [v.name, v] as const))(
    "%s: fails with MessageDecodeError where Go reports an error",
    (_, v) => {
      const c = codecs[v.message]
      expect(() => c.decode(fromHex(v.hex))).toThrow(MessageDecodeError)
    }
  )
})
