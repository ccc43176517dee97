"""Differential fuzzer: the C core (``tfsql._native``) against the pure-Python reference
decoder (``tfsql._reference``), projection by projection, over mutated TFRecord files.

Each input is made from the files in ``tests/data/tensorflow`` (their records, one file
at a time): its payloads are mutated (bit flips, truncation, splices of other records,
varints and lengths that lie, overlong varints) and framed again with valid CRCs, or
the framed bytes themselves are mutated (headers, CRCs, truncation). Both codecs then:

- frame the bytes (``scan_frames``) and search a record boundary from a random offset
  (``find_boundary``),
- summarise the records for inference (``summarize``),
- decode them for the full schema of the seed file, for each of its columns alone,
  and for the schema inferred from the mutated records themselves (the sampled schema).

Any difference (framing, values, ok against an error, error reason or record) is
counted by kind; ``--show`` prints one reproducer (seed and input number) per kind.
Exceptions other than ``DecodeError`` are differences of kind ``crash``.

Usage (see README.md for the AddressSanitizer + UBSan command)::

    python tests/fuzz/fuzz_decoder.py --seed 1 --count 100000
"""

from __future__ import annotations

import argparse
import collections
import random
import struct
import sys
import time
from pathlib import Path

import numpy as np

from tfsql import _native as native
from tfsql import _reference as ref

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from wire import varint  # noqa: E402  (tests/wire.py, put on sys.path above)

DATA = Path(__file__).resolve().parents[1] / "data" / "tensorflow"
SEEDS = ["tabular.tfrecord", "sequence.tfrecord", "proto3_edge_cases.tfrecord", "wire_variants.tfrecord"]
MAX_RECORDS = 6  # records per input: the reference decoder is slow


def masked_crc(data: bytes) -> int:
    return native.masked_crc32c(data)


def frame(payloads: list[bytes]) -> bytes:
    out = bytearray()
    for p in payloads:
        head = struct.pack("<Q", len(p))
        out += head + struct.pack("<I", masked_crc(head)) + p + struct.pack("<I", masked_crc(p))
    return bytes(out)


def payloads_of(framed: bytes) -> list[bytes]:
    offsets, lengths, _, _ = native.scan_frames(framed, 0, -1, -1, True)
    offs = np.frombuffer(offsets, dtype=np.uint64)
    lens = np.frombuffer(lengths, dtype=np.uint64)
    return [framed[int(o) : int(o) + int(n)] for o, n in zip(offs, lens)]


class Seed:
    """One data file: its payloads, record type and the columns of its inferred schema."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.record_type = ref.SEQUENCE_EXAMPLE if "sequence" in name else ref.EXAMPLE
        self.payloads = payloads_of((DATA / name).read_bytes())
        self.columns = schema_columns(DATA / name, self.record_type)


def schema_columns(path: Path, record_type: int) -> list[tuple[bytes, int, int, int]]:
    """Codec columns of a data file's inferred schema."""
    import tfsql
    from tfsql.decoding import _codec_columns
    from tfsql.schema import column_specs

    kind = "sequence_example" if record_type == ref.SEQUENCE_EXAMPLE else "example"
    schema = tfsql.dataset(str(path), record_type=kind).schema
    return _codec_columns(column_specs(schema, record_type))


# --------------------------------------------------------------------------- mutations


def mutate_payload(rnd: random.Random, p: bytes, pool: list[bytes]) -> bytes:
    data = bytearray(p)
    kind = rnd.choice(["flip", "flip", "truncate", "splice", "varint", "length", "overlong", "insert", "delete"])
    if not data and kind not in ("splice", "insert"):
        kind = "insert"
    if kind == "flip":
        for _ in range(rnd.randint(1, 4)):
            i = rnd.randrange(len(data))
            data[i] ^= 1 << rnd.randrange(8)
    elif kind == "truncate":
        del data[rnd.randrange(len(data)) :]
    elif kind == "splice":
        other = rnd.choice(pool)
        a = rnd.randint(0, len(other))
        b = rnd.randint(a, len(other))
        i = rnd.randint(0, len(data))
        j = rnd.randint(i, min(len(data), i + 16))
        data[i:j] = other[a:b]
    elif kind in ("varint", "length"):
        # a byte that starts a varint (a tag's value or a length) replaced by another value
        i = rnd.randrange(len(data))
        j = i
        while j < len(data) and data[j] & 0x80:
            j += 1
        value = rnd.choice([0, 1, 2, 127, 128, 300, len(data), len(data) + 1, 2**31, 2**32 + 5, 2**63, 2**64 - 1])
        data[i : j + 1] = varint(value)
    elif kind == "overlong":
        # a varint padded with redundant continuation bytes (up to 10 bytes, or more)
        i = rnd.randrange(len(data))
        j = i
        while j < len(data) and data[j] & 0x80:
            j += 1
        if j < len(data):
            pad = rnd.randint(1, 10)
            data[i : j + 1] = bytes(data[i:j]) + bytes([data[j] | 0x80]) + b"\x80" * (pad - 1) + b"\x00"
    elif kind == "insert":
        i = rnd.randint(0, len(data))
        data[i:i] = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 8)))
    else:
        i = rnd.randrange(len(data))
        del data[i : i + rnd.randint(1, 8)]
    return bytes(data)


def mutate_framed(rnd: random.Random, framed: bytes) -> bytes:
    data = bytearray(framed)
    if not data:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 40)))
    kind = rnd.choice(["flip", "truncate", "length", "crc"])
    if kind == "flip":
        i = rnd.randrange(len(data))
        data[i] ^= 1 << rnd.randrange(8)
    elif kind == "truncate":
        del data[rnd.randrange(len(data)) :]
    elif kind == "length":  # a header's length replaced, its length CRC fixed or not
        starts = [0]
        offsets, lengths, _, _ = native.scan_frames(framed, 0, -1, -1, False)
        starts += [
            int(o) + int(n) + 4 for o, n in zip(np.frombuffer(offsets, np.uint64), np.frombuffer(lengths, np.uint64))
        ]
        s = rnd.choice([x for x in starts if x + 12 <= len(data)] or [0])
        if s + 12 <= len(data):
            head = struct.pack("<Q", rnd.choice([0, 1, 5000, 2**31, 2**40, 2**64 - 1]))
            data[s : s + 8] = head
            if rnd.random() < 0.5:
                data[s + 8 : s + 12] = struct.pack("<I", masked_crc(head))
    else:
        i = rnd.randrange(len(data))
        data[i : i + 4] = bytes(rnd.getrandbits(8) for _ in range(4))
    return bytes(data)


def make_input(rnd: random.Random, seeds: list[Seed]) -> tuple[Seed, bytes]:
    seed = rnd.choice(seeds)
    k = rnd.randint(1, MAX_RECORDS)
    start = rnd.randrange(max(1, len(seed.payloads) - k + 1))
    payloads = list(seed.payloads[start : start + k])
    pool = [p for s in seeds for p in s.payloads[:8]]
    for _ in range(rnd.randint(1, 3)):
        if payloads:
            i = rnd.randrange(len(payloads))
            payloads[i] = mutate_payload(rnd, payloads[i], pool)
    framed = frame(payloads)
    if rnd.random() < 0.2:
        framed = mutate_framed(rnd, framed)
    return seed, framed


# --------------------------------------------------------------------------- comparison


def plain(value):
    if value is None or isinstance(value, (int, bool, str)):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    return bytes(memoryview(value).cast("B"))


def outcome(call):
    """``("ok", value)``, ``("error", reason, record)`` or ``("crash", class)``."""
    try:
        return ("ok", plain(call()))
    except (native.DecodeError, ref.DecodeError) as exc:
        return ("error", exc.reason, exc.record)
    except Exception as exc:  # noqa: BLE001 - any other exception is a finding
        return ("crash", type(exc).__name__, str(exc)[:200])


def label(result) -> str:
    if result[0] == "ok":
        return "ok"
    if result[0] == "error":
        return f"error:{result[1]}"
    return f"crash:{result[1]}"


def sampled_columns(summary: dict, record_type: int) -> list[tuple[bytes, int, int, int]]:
    """Columns inferred from a ``summarize`` result (UTF-8 names with one kind)."""
    columns = []
    for (location, name), (mask, _present, _min, max_len, _utf8, _inner) in summary.items():
        kinds = [k for k in (ref.BYTES, ref.FLOAT, ref.INT64) if mask & (1 << k)]
        if len(kinds) != 1:
            continue
        if location == ref.FEATURE_LISTS:
            shape = ref.LIST_OF_LIST
        else:
            shape = ref.SCALAR if max_len == 1 else ref.LIST
        columns.append((name, location, kinds[0], shape))
    return columns


def compare(seed: Seed, framed: bytes, rnd: random.Random) -> list[tuple[str, str]]:
    """The differences between the two codecs on one input: ``(what, description)``."""
    diffs: list[tuple[str, str]] = []

    def check(what: str, call_native, call_ref) -> tuple:
        got, want = outcome(call_native), outcome(call_ref)
        if got != want:
            if got[0] == want[0] == "ok":
                kind = "values differ"
            elif got[0] == want[0] == "error" and got[1] == want[1]:
                kind = f"error:{got[1]} at {'an earlier' if got[2] < want[2] else 'a later'} record"
            else:
                kind = f"native {label(got)} / reference {label(want)}"
            diffs.append((what, kind))
        return got

    frames = check(
        "scan_frames",
        lambda: native.scan_frames(framed, 0, -1, -1, True),
        lambda: ref.scan_frames(framed, 0, -1, -1, True),
    )
    start = rnd.randrange(len(framed) + 1)
    max_length = (-1, 255, 1 << 16, 2 << 30)[start % 4]  # no draw: inputs stay as they were
    check(
        "find_boundary",
        lambda: native.find_boundary(framed, start, -1, True, 1024, max_length),
        lambda: ref.find_boundary(framed, start, -1, True, 1024, max_length),
    )
    if frames[0] != "ok":
        return diffs
    offsets, lengths = np.frombuffer(frames[1][0], np.uint64), np.frombuffer(frames[1][1], np.uint64)
    if not len(offsets):
        return diffs
    rt = seed.record_type
    summary = check(
        "summarize",
        lambda: native.summarize(framed, offsets, lengths, rt),
        lambda: ref.summarize(framed, offsets, lengths, rt),
    )

    def decode(what: str, columns) -> None:
        check(
            what,
            lambda: native.Decoder(rt, columns).decode(framed, offsets, lengths),
            lambda: ref.Decoder(rt, columns).decode(framed, offsets, lengths),
        )

    decode("full schema", seed.columns)
    for column in seed.columns:
        decode("one column", [column])
    if summary[0] == "ok":
        decode("sampled schema", sampled_columns(summary[1], rt))
    return diffs


def run(seed: int, count: int, *, show: bool = False, progress: int = 0) -> collections.Counter:
    """Fuzz ``count`` inputs from ``seed``; returns the differences counted by kind.
    Input ``i`` is made by ``random.Random(f"{seed}:{i}")``, so any one can be replayed."""
    seeds = [Seed(name) for name in SEEDS]
    counts: collections.Counter = collections.Counter()
    examples: dict = {}
    started = time.monotonic()
    for i in range(count):
        rnd = random.Random(f"{seed}:{i}")
        source, framed = make_input(rnd, seeds)
        for what, kind in compare(source, framed, rnd):
            key = f"{what}: {kind}"
            counts[key] += 1
            examples.setdefault(key, (i, source.name, framed.hex()))
        if progress and (i + 1) % progress == 0:
            rate = (i + 1) / (time.monotonic() - started)
            print(
                f"{i + 1} inputs, {sum(counts.values())} differences, {rate:.0f} inputs/s", file=sys.stderr, flush=True
            )
    if show:
        for key, (i, name, hexed) in sorted(examples.items()):
            print(f"# {key}: --seed {seed} input {i} (from {name}): {hexed[:400]}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--show", action="store_true", help="print one reproducer per kind of difference")
    parser.add_argument("--progress", type=int, default=0, help="report every N inputs on stderr")
    args = parser.parse_args(argv)
    counts = run(args.seed, args.count, show=args.show, progress=args.progress)
    print(f"{args.count} inputs (seed {args.seed}, C core {native.__file__}): {sum(counts.values())} differences")
    for key, n in counts.most_common():
        print(f"{n:8d}  {key}")
    return 1 if counts else 0


if __name__ == "__main__":
    sys.exit(main())
