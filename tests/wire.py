"""Test helpers: protobuf wire-format bytes written and read by hand (no protobuf, no tfsql).

Used to build records protobuf's own serializer does not write (unknown fields, groups,
repeated or out-of-order fields, malformed bytes) and to check the writer's field order.
"""

from __future__ import annotations


def varint(value: int) -> bytes:
    """``value`` as a base-128 varint (negative values as their 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    """The key of field ``number`` with ``wire_type``."""
    return varint(number << 3 | wire_type)


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag(number, 2) + varint(len(payload)) + payload


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``data[pos:]`` and the position after it."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
