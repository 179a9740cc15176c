-- includes/sameTaskMessage.lua: whether two encoded TaskMessages are the same message as a
-- protobuf decoder reads them, not only the same bytes. Go's proto.Marshal writes a map's entries
-- in random order, so one message written by Go asynq and by effect-asynq (which sorts them) can
-- differ in its bytes. The headers (field 15) are compared as a map: an entry's key (its field 1)
-- and value (field 2), a missing one read as "", the later entry of a key winning. Every other
-- field is compared by its number and wire type, its last occurrence winning, a default value
-- (varint 0, empty string or bytes) the same as the field left out, a varint by its value (the
-- int32 fields retry and retried by their low 32 bits, as a decoder reads them); unknown fields
-- count too.
-- Defines sameTaskMessage(a, b): `a` and `b` are encoded messages (`a` may be false: the task
-- hash has no msg). Returns true when they are the same message; false when they differ, or when
-- either is not a well-formed message (then only equal bytes are the same).
-- Also defines sameDecodedMessage(a, b), the comparison of two different byte strings; its parts
-- (protoVarint, protoFields, sameEntries) are local to it, so a script that only ever sees equal
-- bytes (the usual resend) does not build them.

local function sameDecodedMessage(a, b)
  -- protoVarint: the varint at byte `pos` of `s`. Returns its low and high 32 bits (each exact) and
  -- the position after it; nil when it is cut short or longer than 10 bytes.
  local function protoVarint(s, pos)
    local lo, hi = 0, 0
    for i = 0, 9 do
      local byte = string.byte(s, pos + i)
      if not byte then
        return nil
      end
      local bits = byte % 128
      if i < 4 then
        lo = lo + bits * 2 ^ (7 * i)
      elseif i == 4 then
        lo, hi = lo + (bits % 16) * 2 ^ 28, math.floor(bits / 16)
      else
        hi = hi + bits * 2 ^ (7 * i - 32)
      end
      if byte < 128 then
        return lo, hi % 2 ^ 32, pos + i + 1
      end
    end
    return nil
  end

  -- The TaskMessage fields that are int32 (retry, retried): a decoder keeps a varint's low 32 bits.
  local int32Fields = { [5] = true, [6] = true }

  -- protoFields: the fields of encoded message `s` as {["<number>:<wire type>"] = value} (a
  -- varint's value as text, other fields' bytes; the last occurrence wins; defaults left out), and
  -- the entries of map field `mapField` (a number, or nil for none) as {key = value}. Returns nil
  -- when `s` is not a well-formed message.
  local function protoFields(s, mapField)
    local fields, map, pos, n = {}, {}, 1, #s
    while pos <= n do
      local tag, tagHi
      tag, tagHi, pos = protoVarint(s, pos)
      if not tag or tagHi ~= 0 then
        return nil
      end
      local number, wireType, value = math.floor(tag / 8), tag % 8, nil
      if wireType == 0 then
        local lo, hi
        lo, hi, pos = protoVarint(s, pos)
        if lo and (int32Fields[number] or hi == 0) then
          value = lo ~= 0 and string.format("%.0f", lo) or ""
        elseif lo then
          value = string.format("%.0f:%.0f", hi, lo)
        end
      elseif wireType == 2 then
        local length, _, from = protoVarint(s, pos)
        pos = length and from + length
        value = pos and pos <= n + 1 and string.sub(s, from, pos - 1)
      elseif wireType == 1 or wireType == 5 then
        local from = pos
        pos = pos + (wireType == 1 and 8 or 4)
        value = string.sub(s, from, pos - 1)
      end
      if not value or pos > n + 1 then
        return nil
      end
      if number == mapField and wireType == 2 then
        local entry = protoFields(value, nil)
        if not entry then
          return nil
        end
        map[entry["1:2"] or ""] = entry["2:2"] or ""
      else
        fields[number .. ":" .. wireType] = value ~= "" and value or nil
      end
    end
    return fields, map
  end

  -- sameEntries: whether tables `a` and `b` hold the same keys with the same values.
  local function sameEntries(a, b)
    for k, v in pairs(a) do
      if b[k] ~= v then
        return false
      end
    end
    for k in pairs(b) do
      if a[k] == nil then
        return false
      end
    end
    return true
  end

  local fieldsA, headersA = protoFields(a, 15)
  local fieldsB, headersB = protoFields(b, 15)
  if not fieldsA or not fieldsB then
    return false
  end
  return sameEntries(fieldsA, fieldsB) and sameEntries(headersA, headersB)
end

local function sameTaskMessage(a, b)
  if a == b then
    return true
  end
  if not a or not b then
    return false
  end
  return sameDecodedMessage(a, b)
end
