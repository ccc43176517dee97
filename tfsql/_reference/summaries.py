"""The reference summaries: per-feature statistics of records read straight from the
wire, in wire order (``summarize``, the input of schema inference)."""

from __future__ import annotations

from typing import Any, Iterator, Tuple

from tfsql._reference.common import (
    _read_varint,
    EXAMPLE,
    SEQUENCE_EXAMPLE,
    RAW,
    FEATURES,
    FEATURE_LISTS,
    BYTES,
    FLOAT,
    INT64,
)

from tfsql._reference.decoding import _records, _parse, _feature_maps, _kind


def _length_delimited(data: bytes, number: int) -> Iterator[bytes]:
    """The payloads of every length-delimited field ``number`` in a message, in wire order.

    Only called on bytes protobuf has already parsed, so the wire is well formed;
    a field with another wire type is an unknown field to protobuf and skipped here.
    """
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type == 2 and field_number == number:
            length, pos = _read_varint(data, pos)
            yield data[pos : pos + length]
            pos += length
        else:
            pos = _skip_value(data, pos, field_number, wire_type)


def _skip_value(data: bytes, pos: int, field_number: int, wire_type: int) -> int:
    """Skip the value of a field whose tag ended at ``pos`` (an end-group tag has none)."""
    if wire_type == 0:
        return _read_varint(data, pos)[1]
    if wire_type == 1:
        return pos + 8
    if wire_type == 2:
        length, pos = _read_varint(data, pos)
        return pos + length
    if wire_type == 3:
        return _skip_group(data, pos, field_number)
    if wire_type == 5:
        return pos + 4
    return pos


def _skip_group(data: bytes, pos: int, group_number: int) -> int:
    """Skip a (deprecated) group whose start tag ended at ``pos``."""
    while True:
        tag, pos = _read_varint(data, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type == 4 and field_number == group_number:
            return pos
        pos = _skip_value(data, pos, field_number, wire_type)


def _keys_in_wire_order(payload: bytes, record_type: int) -> Iterator[Tuple[int, str]]:
    """``(location, key)`` of each map entry in wire order (a key may repeat).

    The top-level fields are scanned in wire order too, so a SequenceExample whose
    feature_lists come before its context lists those keys first.
    """
    sections = {1: FEATURES} if record_type == EXAMPLE else {1: FEATURES, 2: FEATURE_LISTS}
    pos = 0
    while pos < len(payload):
        # Walk the top level by hand (wire order across fields 1 and 2).
        tag, after_tag = _read_varint(payload, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type != 2:
            pos = _skip_value(payload, after_tag, field_number, wire_type)
            continue
        length, start = _read_varint(payload, after_tag)
        pos = start + length
        location = sections.get(field_number)
        if location is None:
            continue
        for entry in _length_delimited(payload[start:pos], 1):
            key = b""
            for key in _length_delimited(entry, 1):
                pass  # the last key field of an entry wins
            yield location, key.decode("utf-8")


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _feature_stats(feature) -> Tuple[int, int, bool]:
    """``(kind, value count, all bytes values are UTF-8)`` of one Feature."""
    kind = _kind(feature)
    if kind == BYTES:
        values = feature.bytes_list.value
        return kind, len(values), all(_is_utf8(v) for v in values)
    if kind == FLOAT:
        return kind, len(feature.float_list.value), True
    if kind == INT64:
        return kind, len(feature.int64_list.value), True
    return kind, 0, True


def summarize(buf: Any, offsets: Any, lengths: Any, record_type: int) -> dict:
    """Statistics for schema inference over the given records; see ``_native.pyi``.

    Returns ``{(location, name_bytes): [kinds_mask, present, min_len, max_len, utf8,
    max_inner_len]}`` in first-seen (record, then wire) order.
    """
    if record_type not in (EXAMPLE, SEQUENCE_EXAMPLE, RAW):
        raise ValueError(f"unknown record type {record_type!r}")
    stats: dict = {}
    for record, payload in enumerate(_records(buf, offsets, lengths)):
        if record_type == RAW:
            continue
        maps = _feature_maps(_parse(payload, record_type, record), record_type)
        seen_here = set()
        for location, key in _keys_in_wire_order(payload, record_type):
            if (location, key) in seen_here:
                continue
            seen_here.add((location, key))
            entry = maps[location][key]
            if location == FEATURES:
                kind, count, utf8 = _feature_stats(entry)
                kinds_mask, inner_max = 1 << kind, count
            else:
                kinds_mask, inner_max, utf8 = 0, 0, True
                for step in entry.feature:
                    kind, step_count, step_utf8 = _feature_stats(step)
                    kinds_mask |= 1 << kind
                    inner_max = max(inner_max, step_count)
                    utf8 = utf8 and step_utf8
                count = len(entry.feature)
            name = key.encode("utf-8")
            current = stats.get((location, name))
            if current is None:
                stats[(location, name)] = [kinds_mask, 1, count, count, utf8, inner_max]
            else:
                current[0] |= kinds_mask
                current[1] += 1
                current[2] = min(current[2], count)
                current[3] = max(current[3], count)
                current[4] = current[4] and utf8
                current[5] = max(current[5], inner_max)
    return stats


__all__ = ["summarize"]
