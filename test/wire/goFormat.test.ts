import { describe, expect, it } from "vitest"
import {
  goDuration,
  goDurationNs,
  goJson,
  goQuote,
  goUnixDate,
  goUnquote,
  parseGoDuration,
  parseGoDurationNs,
  parseGoUnixDate
} from "../../src/wire/goFormat.js"

describe("Go time.Duration.String()", () => {
  it.each([
    [0n, "0s"],
    [1n, "1ns"],
    [999n, "999ns"],
    [1_000n, "1µs"],
    [1_500n, "1.5µs"],
    [1_500_000n, "1.5ms"],
    [999_999_999n, "999.999999ms"],
    [1_000_000_000n, "1s"],
    [1_000_000_001n, "1.000000001s"],
    [60_000_000_000n, "1m0s"],
    [3_600_000_000_000n, "1h0m0s"],
    [-1_500_000_000n, "-1.5s"],
    [-1n, "-1ns"],
    [(1n << 63n) - 1n, "2562047h47m16.854775807s"],
    [-(1n << 63n), "-2562047h47m16.854775808s"]
  ])("%s ns prints %s, and parses back", (ns, s) => {
    expect(goDurationNs(ns)).toBe(s)
    expect(parseGoDurationNs(s)).toBe(ns)
  })

  it("takes milliseconds, fractions down to the nanosecond", () => {
    expect(goDuration(1500)).toBe("1.5s")
    expect(goDuration(0.000001)).toBe("1ns")
    expect(goDuration(90 * 60_000)).toBe("1h30m0s")
  })

  it("parses Go's other accepted spellings", () => {
    expect(parseGoDuration("1h2m3.5s")).toBe(3_723_500)
    expect(parseGoDuration("1.5h")).toBe(5_400_000)
    expect(parseGoDuration("250us")).toBe(0.25)
    expect(parseGoDuration("250μs")).toBe(0.25) // Greek mu, U+03BC
    expect(parseGoDuration("+3s")).toBe(3000)
    expect(parseGoDuration("0")).toBe(0)
    expect(parseGoDuration(".5s")).toBe(500)
  })

  it.each(["", "5", "1x", "s", "-", ".s", "3000000h"])("rejects %j", (s) => {
    expect(() => parseGoDurationNs(s)).toThrow(/invalid duration/)
  })
})

describe("Go strconv.Quote (%q)", () => {
  it.each([
    ["plain", '"plain"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["\x07\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'],
    ["\x00\x1f\x7f", '"\\x00\\x1f\\x7f"'],
    ["日本語 🚀", '"日本語 🚀"'],
    ["\u00a0\u200b", '"\\u00a0\\u200b"'],
    ["\u{e0001}", '"\\U000e0001"'],
    ["\ud800x", '"\ufffdx"']
  ])("quotes %j as %s, and unquotes it back", (s, q) => {
    expect(goQuote(s)).toBe(q)
    expect(goUnquote(q)).toBe(s.replace("\ud800", "\ufffd"))
  })

  it("unquotes octal and \\x byte escapes forming UTF-8", () => {
    expect(goUnquote('"\\303\\251\\xc3\\xa9"')).toBe("éé")
  })

  it.each(['"a', 'a"', '"a"b"', '"\\q"', '"\\x4"', '"\\400"'])("rejects %s", (q) => {
    expect(() => goUnquote(q)).toThrow()
  })
})

describe("Go encoding/json output (HTML-safe)", () => {
  it("escapes <, >, &, U+2028 and U+2029 as Go does, and short-escapes control characters", () => {
    expect(goJson(["<a>&", "\u2028\u2029"])).toBe('["\\u003ca\\u003e\\u0026","\\u2028\\u2029"]')
    expect(goJson("\n\t\b\f\x01")).toBe('"\\n\\t\\b\\f\\u0001"')
  })
})

describe("Go time.UnixDate", () => {
  it("prints in UTC by default with two spaces before a one-digit day", () => {
    expect(goUnixDate(new Date(Date.UTC(2030, 0, 1)))).toBe("Tue Jan  1 00:00:00 UTC 2030")
    expect(goUnixDate(Date.UTC(2024, 1, 29, 23, 59, 59))).toBe("Thu Feb 29 23:59:59 UTC 2024")
  })

  it("prints Go's zero time with a four-digit year", () => {
    expect(goUnixDate(-62135596800000)).toBe("Mon Jan  1 00:00:00 UTC 0001")
  })

  it("prints in a fixed zone (time.FixedZone) and in IANA zones (letters where Intl has them, else Go's numeric form)", () => {
    expect(goUnixDate(Date.UTC(2030, 0, 14, 20, 0, 0), { name: "X", offsetSeconds: -(3 * 3600 + 30 * 60) })).toBe(
      "Mon Jan 14 16:30:00 X 2030"
    )
    expect(goUnixDate(Date.UTC(2030, 0, 1), "America/New_York")).toBe("Mon Dec 31 19:00:00 EST 2029")
    expect(goUnixDate(Date.UTC(2030, 6, 1), "America/New_York")).toBe("Sun Jun 30 20:00:00 EDT 2030")
    expect(goUnixDate(Date.UTC(2030, 0, 1), "Asia/Kolkata")).toBe("Tue Jan  1 05:30:00 +0530 2030")
  })

  it("parses UTC, numeric zones and given abbreviations to the right instant", () => {
    expect(parseGoUnixDate("Tue Jan  1 00:00:00 UTC 2030")).toEqual({
      date: new Date(Date.UTC(2030, 0, 1)),
      zone: "UTC",
      offsetKnown: true
    })
    expect(parseGoUnixDate("Tue Jan  1 05:30:00 +0530 2030").date).toEqual(new Date(Date.UTC(2030, 0, 1)))
    expect(parseGoUnixDate("Mon Dec 31 19:00:00 EST 2029", { EST: -5 * 3600 }).date).toEqual(
      new Date(Date.UTC(2030, 0, 1))
    )
    expect(parseGoUnixDate("Mon Dec 31 19:00:00 EST 2029").offsetKnown).toBe(false)
    expect(parseGoUnixDate("Mon Jan  1 00:00:00 UTC 0001").date.getTime()).toBe(-62135596800000)
  })

  it("rejects other layouts", () => {
    expect(() => parseGoUnixDate("2030-01-01T00:00:00Z")).toThrow(/UnixDate/)
  })
})
