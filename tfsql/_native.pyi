"""Type stub and contract of ``tfsql._native``, the C core.

The same API is implemented in pure Python by ``tfsql._reference`` (the oracle for
differential tests and the fallback under ``TFSQL_PURE_PYTHON=1``); ``tfsql._codec``
picks one. Everything here works on raw buffers: the Python layers above turn them
into pyarrow arrays with ``pa.Array.from_buffers``.

Codes
-----
record types : ``EXAMPLE = 0``, ``SEQUENCE_EXAMPLE = 1``, ``RAW = 2``
locations    : ``FEATURES = 0`` (Example.features / SequenceExample.context),
               ``FEATURE_LISTS = 1`` (SequenceExample.feature_lists)
kinds        : ``BYTES = 1``, ``FLOAT = 2``, ``INT64 = 3`` (the Feature oneof field numbers),
               ``KIND_NONE = 0`` (a Feature with no kind set)
shapes       : ``SCALAR = 0``, ``LIST = 1``, ``LIST_OF_LIST = 2``
frame status : ``FRAME_OK = 0``, ``FRAME_TRUNCATED = 1``, ``FRAME_BAD_LENGTH_CRC = 2``,
               ``FRAME_BAD_DATA_CRC = 3``, ``FRAME_TOO_LONG = 4`` (``count_headers``)

Buffers
-------
Every "buffer" argument accepts any C-contiguous object with the buffer protocol
(bytes, bytearray, memoryview, mmap, numpy array). Returned buffers are ``Buffer``
objects: they own their memory and export it through the buffer protocol, so
``pa.py_buffer(b)`` and ``np.frombuffer(b, ...)`` wrap them without copying.
Bitmaps are Arrow validity bitmaps: LSB first, bit set = valid.
"""

import sys
from typing import Any, Collection, List, Optional, Sequence, Tuple, Union

if sys.version_info >= (3, 12):
    from collections.abc import Buffer as _BufferLike
else:  # any object exporting the buffer protocol (bytes, memoryview, numpy arrays...)
    _BufferLike = Any

EXAMPLE: int
SEQUENCE_EXAMPLE: int
RAW: int
FEATURES: int
FEATURE_LISTS: int
KIND_NONE: int
BYTES: int
FLOAT: int
INT64: int
SCALAR: int
LIST: int
LIST_OF_LIST: int
FRAME_OK: int
FRAME_TRUNCATED: int
FRAME_BAD_LENGTH_CRC: int
FRAME_BAD_DATA_CRC: int
FRAME_TOO_LONG: int
BOUNDARY_FOUND: int
BOUNDARY_NONE: int
BOUNDARY_MORE: int
RESYNC_LOOKAHEAD: int
READER_PLAIN: int
READER_GZIP: int
READER_ZLIB: int
READER_DAMAGE: int
FRAME_PAST_END: int
READER_STREAM_CORRUPT: int
READER_STREAM_TRUNCATED: int
READER_WINDOW_READ: int

class RecordReader:
    """One file's records through the core's record reader (``tfsql/core/reader.c``).

    ``size`` is the file's stored size and ``compression`` a ``READER_*`` code; the bytes
    come from ``fd`` (``pread``, the GIL released) or from ``read(view, offset)``, which
    fills the writable ``view`` with the file's bytes from ``offset`` and returns how many
    it wrote (0: the file ended early, an ``OSError``). ``check()``, when given, is called
    before each read (an interrupt check). Every window is fresh: ``window(n)`` (or a
    ``Buffer``) gives a writable buffer of at least ``n`` bytes, the unread bytes of the
    last window are copied there, and chunks handed out of a window stay valid while held.

    ``start`` (plain files): a record boundary to read from, record ``first_index``.
    ``stop``: a byte range; only records whose header starts before it, and the reading
    ends (``chain_end``) at the first header at or past it. Reads are ``read_size`` new
    bytes, doubling up to ``read_max``, no more than 64 KiB each once ``budget`` bytes are
    read; in a byte range no more than the range needs (but the rest of a record).
    """

    chain_end: Optional[int]  # where the next range's first record starts (None: damage ended it)
    consumed: int  # (decompressed) stream bytes read
    damage: Tuple[int, int, int, int, int, int, int, str]
    """``(status, index, offset, length, limit, rest_of_file, skipped_to, detail)``: a
    ``FRAME_*`` status (``FRAME_PAST_END``: a plain file holds fewer bytes than the
    header claims) or ``READER_STREAM_CORRUPT`` / ``READER_STREAM_TRUNCATED`` (the
    compressed stream; ``detail``: zlib's message); the record's index and the offset of
    its header; the header's length and the limit (too long: the limit; past the end,
    truncated: the bytes held). After ``skip``: ``rest_of_file``, or where reading
    resumed (``skipped_to``)."""

    def __init__(
        self,
        size: int,
        compression: int,
        path: str,
        *,
        read: Optional[Any] = None,
        fd: int = -1,
        window: Optional[Any] = None,
        start: int = 0,
        first_index: int = 0,
        stop: int = -1,
        read_size: int = 262144,
        read_max: int = -1,
        budget: int = -1,
        check: Optional[Any] = None,
    ) -> None: ...
    def next(
        self, max_records: int = -1, max_bytes: int = -1, max_record_bytes: int = 2**64 - 1, verify: bool = True
    ) -> Union[None, int, Tuple[Any, bytes, bytes, int, int]]:
        """The next chunk ``(window, offsets, lengths, first_index, base)`` (uint64 payload
        offsets into ``window``, whose byte 0 is stream offset ``base``, and lengths), at
        most ``max_records`` records and ``max_bytes`` of payload (one larger record: a
        chunk of one); None at the end; ``READER_DAMAGE`` (see ``damage``)."""
    def skip(self, max_record_bytes: int = 2**64 - 1) -> int:
        """Go past ``damage``: step over a record whose data CRC failed, resynchronise
        where framing is lost. 0, or ``READER_DAMAGE`` when the compressed stream itself
        is damaged on the way (``damage`` replaced)."""

class Buffer:
    """Memory owned by the C core, exported through the buffer protocol."""
    def __len__(self) -> int: ...

class DecodeError(ValueError):
    """A record does not decode for the requested columns.

    Attributes
    ----------
    reason : str
        ``"malformed"`` (the payload is not a valid protobuf of the record type),
        ``"kind_mismatch"`` (feature holds another kind than the column's),
        ``"not_scalar"`` (a scalar column met a feature with more than one value),
        ``"overflow"`` (a batch's bytes exceed 32-bit Arrow offsets),
        ``"data_crc"`` (with ``verify``: a record's data CRC does not match).
    record : int
        Index of the record within the decoded batch (0-based).
    column : int
        Index of the column (into the Decoder's columns), or -1.
    found_kind : int
        For ``kind_mismatch``: the kind found; else 0.
    """

    reason: str
    record: int
    column: int
    found_kind: int

def crc32c(data: _BufferLike, crc: int = 0) -> int:
    """Unmasked CRC-32C of ``data``, continuing from ``crc``."""

def masked_crc32c(data: _BufferLike) -> int:
    """TensorFlow's masked CRC-32C: ``((c >> 15 | c << 17) + 0xa282ead8) & 0xffffffff``."""

def hardware_crc() -> bool:
    """Whether the CPU's CRC-32C instruction is in use (decided at import time)."""

def scan_frames(
    buf: _BufferLike,
    start: int = 0,
    max_records: int = -1,
    max_bytes: int = -1,
    verify: bool = True,
) -> Tuple[Buffer, Buffer, int, int]:
    """Index the TFRecord frames in ``buf`` starting at byte ``start``.

    Stops after ``max_records`` records (-1: no limit) or before the record that would
    bring the payload total above ``max_bytes`` (-1: no limit; at least one record is
    always returned when one is complete). The length CRC is always checked; the data
    CRC only when ``verify``.

    Returns ``(offsets, lengths, end, status)``: ``offsets`` and ``lengths`` are uint64
    arrays (native endian) of each record's payload start (absolute in ``buf``) and
    length; ``end`` is the byte where scanning stopped; ``status`` says why:
    ``FRAME_OK`` (a limit was reached, or ``end == len(buf)``), ``FRAME_TRUNCATED`` (the
    bytes from ``end`` are an incomplete header or payload: in a stream, read more; at
    end of file, a truncated record), ``FRAME_BAD_LENGTH_CRC`` / ``FRAME_BAD_DATA_CRC``
    (the record at ``end`` is corrupt; for a bad data CRC its 8-byte length is valid,
    so the caller may skip ``12 + length + 4`` bytes). Records before ``end`` are good.
    The GIL is released while scanning.
    """

def count_headers(fd: int, start: int, size: int, max_length: int) -> Tuple[int, int, int, int]:
    """Count the frames of a plain file from byte ``start`` to ``size``, reading only
    each record's 12-byte header with positioned reads (``pread``) on ``fd``, the GIL
    released. After a record under 4 KiB a read takes 64 KiB (small records cost a
    fraction of a read each); otherwise it takes the 12-byte header alone. The length CRC is checked; data CRCs are not (payloads are never read).

    Returns ``(count, end, status, length)``: ``count`` good records end at ``end``;
    ``status`` is ``FRAME_OK`` (``end == size``), ``FRAME_TRUNCATED`` (the header at
    ``end`` is incomplete, or its record runs past ``size``), ``FRAME_BAD_LENGTH_CRC`` or
    ``FRAME_TOO_LONG`` (its length, returned as ``length``, exceeds ``max_length``).
    Not available on Windows. Raises ``OSError`` when a read fails.
    """

def header_offsets(fd: int, start: int, size: int, max_length: int) -> Tuple[Buffer, int, int, int]:
    """:func:`count_headers`, also returning where each counted record's header starts:
    ``(offsets, end, status, length)`` with ``offsets`` a uint64 array (native endian)
    of file offsets. What ``tfsql index`` writes. Not available on Windows."""

def plan_pieces(start: int, stop: int, piece: int) -> List[Tuple[int, int]]:
    """The byte ranges ``[start, stop)`` is cut into for parallel reads: ``piece``
    bytes each from ``start``, the last one shorter; none when ``stop <= start``. A
    ``piece`` of 0 raises ValueError. (The core's ``tfsql_range_count`` /
    ``tfsql_range_at``, which the DuckDB extension's scan cuts its units with.)"""

def find_boundary(
    buf: _BufferLike,
    start: int = 0,
    stop: int = -1,
    at_eof: bool = True,
    lookahead: int = 256 << 10,
    max_length: int = -1,
) -> Tuple[int, int]:
    """The first record boundary at or after ``start`` and before ``stop`` (-1: the
    buffer's end), for a reader that starts inside a file (splittable reads).

    A position is a boundary when its length is at most ``max_length`` (negative: no
    limit) and matches its CRC, the whole record fits and its
    data CRC matches (always checked: a random position passes both with probability
    about 2^-64), and the records after it stay well framed (both CRCs) for
    ``lookahead`` bytes or up to the end of the file (so frames stored inside a payload are not taken for
    boundaries). ``at_eof`` says that ``buf`` ends where the file ends.

    Returns ``(status, pos)``: ``(BOUNDARY_FOUND, p)``; ``(BOUNDARY_NONE, stop)`` when
    no boundary starts before ``stop``; ``(BOUNDARY_MORE, p)`` when deciding about ``p``
    needs bytes past the buffer's end (read more from ``p`` and call again). The GIL is
    released while searching. Lengths are checked for plausibility before any CRC, so
    random bytes and zeros are searched at a fraction of a second per GiB.
    """

def encode_frames(data: _BufferLike, value_offsets: _BufferLike) -> Tuple[Buffer, Buffer]:
    """Frame raw payloads: record ``i`` is ``data[value_offsets[i]:value_offsets[i+1]]``
    (``value_offsets`` int64). Returns ``(framed, ends)``; ``ends`` is a uint64 array of
    the end byte of each framed record in ``framed``."""

class Decoder:
    """A decoder compiled once for a record type and a list of output columns.

    ``columns`` is a sequence of ``(name: bytes, location, kind, shape)``. For ``RAW``
    the columns are ignored and the output is one ``SCALAR`` ``BYTES`` column holding
    each whole payload.
    """
    def __init__(self, record_type: int, columns: Sequence[Tuple[bytes, int, int, int]]) -> None: ...
    def decode(
        self,
        buf: _BufferLike,
        offsets: _BufferLike,
        lengths: _BufferLike,
        unknown: Optional[set] = None,
        verify: bool = False,
    ) -> list:
        """Decode the records ``buf[offsets[i]:offsets[i]+lengths[i]]`` (uint64 arrays).

        When ``unknown`` is a set, ``(location, name_bytes)`` of up to 16 distinct
        features that the records hold but no column reads are added to it (the
        scanner uses this to report features an inferred schema lacks).

        With ``verify``, each record's data CRC is checked against the 4 bytes that
        follow its payload in ``buf`` just before the record is decoded (while its
        bytes are in cache); a mismatch is a ``DecodeError`` with reason ``"data_crc"``.

        Returns one tuple per column:
        ``(validity, null_count, outer_offsets, inner_validity, inner_null_count,
        inner_offsets, value_offsets, values)``

        - ``validity``: bitmap of n rows, or None when ``null_count == 0``. A row is
          null when the feature is missing, has no kind set, or (SCALAR only) has an
          empty list.
        - SCALAR: ``outer_offsets``/``inner_*`` are None; numeric ``values`` holds n
          slots (int64 or float32 LE; zero for null rows).
        - LIST: ``outer_offsets`` int32[n+1] into the values (null rows are empty).
        - LIST_OF_LIST: ``outer_offsets`` int32[n+1] into the inner lists;
          ``inner_validity`` bitmap over the inner lists or None (an inner Feature with
          no kind is a null inner list); ``inner_offsets`` int32[m+1] into the values.
        - BYTES values: ``value_offsets`` int32[count+1] and ``values`` the data; other
          kinds have ``value_offsets`` None.

        Raises ``DecodeError``. The GIL is released while decoding.
        """
    def builder(self, rows: int = 0, payload: int = 0) -> Builder:
        """A :class:`Builder` decoding several buffers of records into one set of
        columns, reserving for about ``rows`` records of ``payload`` bytes."""

class Builder:
    """Columns decoded from several buffers (``Decoder.builder()``): a reader feeds each
    small read while it is in cache and reuses the buffer, yet cuts large batches.
    ``decode(...)`` is one ``feed`` then ``finish``. Not for two threads at once."""

    rows: int
    """Records fed so far."""
    def feed(
        self,
        buf: _BufferLike,
        offsets: _BufferLike,
        lengths: _BufferLike,
        unknown: Optional[set] = None,
        verify: bool = False,
    ) -> None:
        """Decode more records as ``Decoder.decode`` does. A ``DecodeError`` counts
        records from this call's first and ends the Builder. Nothing keeps pointing into
        ``buf`` once it returns."""
    def finish(self) -> list:
        """The columns of every record fed, laid out as ``Decoder.decode`` returns them;
        the Builder is done after it."""
    def finish_arrow(self) -> "ArrowColumns":
        """The columns of every record fed as one Arrow C data interface struct array
        (child ``i`` is column ``i``, in the layout ``Decoder.decode`` describes: int64,
        float32 or binary values, wrapped in lists), moved out without a copy; the
        Builder is done after it. Native only: the reference twin has ``finish``, and
        ``tfsql.decoding`` wraps that instead."""

class ArrowColumns:
    """A struct ArrowArray that a consumer imports once, e.g.
    ``pyarrow.RecordBatch._import_from_c(columns.address, schema)`` with the schema of
    the decoded types (keep this object alive during the call); released with this
    object otherwise."""

    address: int
    """The address of the struct ArrowArray."""
    length: int
    """Its rows."""
    nbytes: int
    """Bytes of its buffers (as the column builders held them)."""
    def capsule(self) -> object:
        """The struct moved into a PyCapsule named ``"arrow_array"`` (the Arrow PyCapsule
        interface; ``tfsql.decoding.ExportedBatch`` pairs it with the schema's), which
        releases it unless a consumer takes it over; these columns are empty after it
        (ValueError on any further use)."""
    def utf8_invalid(self, columns: Sequence[int]) -> int:
        """The first position in ``columns`` (column indices) whose column holds a bytes
        value that is not valid UTF-8, each value checked on its own (or that is not a
        bytes column); -1 when none. The GIL is released."""

class Encoder:
    """An encoder compiled once for a record type and ``(name, location, kind, shape)``
    columns (same codes as ``Decoder``; ``RAW`` takes one SCALAR BYTES column)."""
    def __init__(self, record_type: int, columns: Sequence[Tuple[bytes, int, int, int]]) -> None: ...
    def encode(self, arrays: Sequence[tuple], n_rows: int) -> Tuple[Buffer, Buffer]:
        """Encode ``n_rows`` records and frame them.

        ``arrays`` has one tuple per column:
        ``(validity, outer_offsets, inner_offsets, value_offsets, values)``:
        ``validity`` a uint8 array of n_rows bytes (0 = null: the feature is omitted)
        or None; ``outer_offsets`` int64[n_rows+1] for LIST / LIST_OF_LIST, else None;
        ``inner_offsets`` int64[m+1] for LIST_OF_LIST, else None; ``value_offsets``
        int64[count+1] for BYTES, else None; ``values`` int64 or float32 values, or the
        bytes data. Offsets index into the buffers as given (they need not start at 0).
        A valid row whose list is empty writes a Feature with an empty list.

        Returns ``(framed, ends)``: the framed records and a uint64 array of each
        record's end byte in ``framed``. The GIL is released while encoding.
        """

def summarize(buf: _BufferLike, offsets: _BufferLike, lengths: _BufferLike, record_type: int) -> dict:
    """Statistics for schema inference over the given records.

    Returns ``{(location, name_bytes): [kinds_mask, present, min_len, max_len, utf8,
    max_inner_len]}`` in first-seen order, where ``kinds_mask`` has bit ``1 << kind``
    set for each kind seen (``1 << KIND_NONE`` for a Feature with no kind), ``present``
    counts records holding the feature, ``min_len``/``max_len`` are the smallest and
    largest value counts seen (for FEATURE_LISTS: the number of steps), ``utf8`` is
    True while every bytes value seen is valid UTF-8, and ``max_inner_len`` is the
    largest value count of one step (FEATURE_LISTS) or equals ``max_len``. Raises
    ``DecodeError`` (reason ``"malformed"``) like ``Decoder.decode``.
    """

SAMPLE_OK: int
SAMPLE_DAMAGE: int
SAMPLE_REFUSED: int

class InferenceError(ValueError):
    """The inference sample does not resolve to columns (``tfsql/core/infer.c``).

    Attributes: ``reason`` (``"kind_conflict"``, ``"name_taken"``, ``"name_not_utf8"``,
    ``"missing"``),
    ``feature``, ``path`` ("" when none), ``record`` and ``offset`` (-1 when none).
    """

    reason: str
    feature: str
    path: str
    record: int
    offset: int

def pick_files(sizes: Sequence[int | None], infer_files: int | None) -> list[int]:
    """Positions of the files inference samples: ``infer_files`` of the non-empty ones
    (size != 0; None: unknown, counted as non-empty) spread evenly, first and last
    included (None: all)."""

def target_lock(path: str | bytes, exclusive: bool = True, wait: bool = True) -> int | None:
    """Lock the directory ``path`` (``flock`` on a descriptor of the directory itself,
    tfsql/core/target_lock.c): the descriptor holding it (close it to release), or None
    when the mount has no ``flock``. ``BlockingIOError`` when ``wait`` is false and
    another holds it; ``FileNotFoundError`` when the directory does not exist."""

def owner_lock(path: str) -> int | None:
    """Create the owner file ``path`` of a staging directory and hold its lock while the
    writer lives: the descriptor (close it to release), or None when the mount has no
    ``flock``."""

def owner_alive(path: str) -> bool:
    """Whether the owner file ``path`` exists and its lock is held."""

def buffer_pool() -> tuple[int, int, int, int]:
    """``(buffers, bytes, reuses, limit)``: the large freed output buffers the C core
    keeps for later batches (``tfsql/core/buffer_pool.c``), how many times a batch
    started from one, and the most bytes it keeps now (64 MiB plus the running scans'
    widening)."""

def buffer_pool_widen(bytes: int, /) -> None:
    """Let the pool keep ``bytes`` more while a scan holding several batches at once
    runs (the widenings of concurrent scans add up)."""

def buffer_pool_narrow(bytes: int, /) -> None:
    """Take a scan's widening back (never below 64 MiB), freeing the oldest buffers
    above the limit."""

def buffer_pool_clear() -> None:
    """Free every buffer the pool keeps."""

def _buffer_pool_hold(milliseconds: int, /) -> None:
    """Hold the pool's lock that long, without the GIL (tests only)."""

class Inference:
    """Schema inference over framed records, file by file: the per-file budget of
    ``infer_sample`` records and ``infer_bytes`` payload bytes (None: no bound; the byte
    bound is ignored when ``infer_sample`` is None), the merged feature summaries and the
    columns they resolve to."""

    records_wanted: int | None
    sampled_records: int
    sampled_bytes: int

    def __init__(self, record_type: int, infer_sample: int | None, infer_bytes: int | None) -> None: ...
    def begin_file(self, path: str) -> None:
        """Start the sample of the next chosen file."""
    def add(
        self, buf: _BufferLike, offsets: _BufferLike, lengths: _BufferLike, first_index: int, base: int
    ) -> tuple[int, bool]:
        """Fold the records within the file's budget: (records taken, sample complete).
        Raises ``DecodeError`` (``"malformed"``, record counted from this block's first)
        or ``InferenceError`` (``"name_not_utf8"``)."""
    def sample_file(
        self, reader: RecordReader, max_record_bytes: int, verify: bool, skip_corrupt: bool, tolerant: bool
    ) -> tuple[int, bool, bool, InferenceError | None]:
        """Read the current file's sample through ``reader`` (started, nothing read yet)
        with the core's loop (``infer_sample_file``): ``(status, sampled, sequence_hint,
        error)``. ``SAMPLE_DAMAGE``: ``reader.damage`` is an error now (damage is gone
        past under ``skip_corrupt``; ``tolerant`` stops the file's sample there);
        ``SAMPLE_REFUSED``: ``error`` (reason ``"malformed"`` with path, record and
        offset, or the sample's refusal). ``sequence_hint``: read as Examples, the first
        record looks like a SequenceExample."""
    def resolve(self, lists_always: bool, schema_hint: str) -> list[tuple[bytes, str, int, int, int, bool]]:
        """``[(name, column, location, kind, shape, utf8)]`` in first-seen order (kind
        ``KIND_NONE``: never had a kind). Raises ``InferenceError``."""
    def check_missing(self, columns: Sequence[str], schema_name: str, hint: str, described: Sequence[str] = ()) -> None:
        """Raise ``InferenceError`` (reason ``"missing"``) naming the ``columns`` no
        sampled feature holds, unless the dataset's description names them
        (``described``: a tfsql writer's or a TFDS ``features.json``); nothing raised
        when the sample holds no feature."""

# -- the dataset rules (tfsql/core/paths.c, hive.c, layout.c, detect.c, intent.c) --------

ENTRY_FILE: int
ENTRY_DIR: int
ENTRY_DIR_LINK: int
ENTRY_OTHER: int
ENTRY_MISSING: int
NAMED: int
MATCHED: int
IN_WALK: int
WALK_READ: int
WALK_DESCEND: int
WALK_SKIP: int
WALK_REFUSE: int
LAYOUT_NONE: int
LAYOUT_TFDS: int
LAYOUT_TFX: int

def is_hidden_name(name: str) -> bool:
    """A path component readers skip: ``.`` or ``_`` first (``_`` without ``=``), or a
    name ending in ``.crc`` or ``._COPYING_``."""

def has_glob_magic(path: str) -> bool:
    """Whether ``path`` holds a glob character (``*``, ``?`` or ``[``)."""

def keep_listed(rel: str, exempt: Tuple[str, ...]) -> bool:
    """Whether a listed file (its path below the named root) is data: no hidden
    component, unless one of the glob components ``exempt`` matches it."""

def walk_action(kind: int, context: int) -> int:
    """What a listing does with an entry of ``kind`` (``ENTRY_*``) met in ``context``
    (``NAMED``, ``MATCHED``, ``IN_WALK``): ``WALK_READ``, ``WALK_DESCEND``,
    ``WALK_SKIP`` or ``WALK_REFUSE``."""

#: A feature list named like a context feature reads as the column N + this suffix.
FEATURE_LIST_SUFFIX: str
#: The string column a TFDS / TFX layout adds, holding each file's split.
SPLIT_COLUMN: str

def listing_key(seed: int, entries: Sequence[Tuple[str, int, int]]) -> int:
    """A 64-bit key of ``(path, size, mtime_ns)`` entries (and a seed): the schema is
    inferred again only when it changes (the extension's cache and ``tfsql.connect()``'s)."""

def glob_root(pattern: str) -> str:
    """The root of a glob pattern: its longest prefix of directory components without
    glob characters (never the last component); ``"/"`` for an absolute pattern whose
    first component has them."""

def glob_exempts(component: str) -> bool:
    """A glob component (below the pattern's root) that opts the hidden names it matches
    back in: it starts with ``.`` or ``_`` and is not ``**``."""

def plan_matches(paths: Sequence[str], kinds: Sequence[int], globstar: bool) -> list[int]:
    """The action for each match of one glob (`walk_action`, met walking when the
    pattern holds ``**``), a directory below or equal to another walked match
    ``WALK_SKIP``: its files are listed with that one's (``tfsql_plan_matches``)."""

def plan(
    entries: Sequence[Tuple[str, Optional[str], Optional[str], Optional[bytes], int, int, int, bool]],
    nitems: int,
    prefixes: Sequence[str],
    infer_files: Optional[int],
) -> Tuple[list[int], Optional[int], int, Optional[list[str]], Optional[str], list[int]]:
    """The plan of a whole listing (``tfsql_plan``). Each entry is a regular file listed
    for source item ``item``: ``(path, root or None (named), the item's glob pattern or
    None, an intent record's bytes or None, size, mtime_ns, item, fallback)``. Returns
    ``(files, empty_item, layout, splits, tfds_dir, picks)``: the entries to read, in
    order; the first item naming no data file (None: none); ``LAYOUT_*``; each file's
    split (None without a layout); the TFDS shards' directory; the positions in
    ``files`` inference samples."""

def path_order(paths: Sequence[str]) -> list[int]:
    """The indices of `paths` sorted by their bytes (UTF-8, surrogateescape), a repeated
    path kept once (its first listing): the order of every listing."""

def path_display(path: str) -> str:
    """The path as shown in a message or a column: each byte that is not UTF-8 as
    ``\\xNN`` (never an error, never None)."""

def hive_plan(
    files: Sequence[Tuple[str, Optional[str], Optional[str]]],
    whole_path: bool,
    required: bool,
    typed: Sequence[str],
    phrases: dict[str, str],
) -> Any:
    """The hive columns of the files ``(path, root or None, display or None)``:
    ``(names, raw, ints)`` -- the keys, per column each file's value (str or None,
    bytes-exact) and per column the int64 values when the column types as int64, else
    None -- or ``("refused", reason, fields, message)`` with a reason of
    `tfsql.messages.HIVE` rendered with `phrases` (a dialect of
    `tfsql.messages.DIALECTS`)."""

def hive_segments(directory: str) -> list[Tuple[str, Optional[str]]]:
    """The unescaped ``(key, value)`` pairs of the ``key=value`` components of a
    directory text; ``__HIVE_DEFAULT_PARTITION__`` gives None."""

def hive_unescape(text: str) -> str:
    """Every ``%XX`` (two hex digits) of ``text`` becomes the character U+00XX."""

def hive_int64(text: str) -> Optional[int]:
    """The value of a partition value that types as int64, else None."""

def hive_directory(path: str, root: Optional[str], whole_path: bool) -> str:
    """The directories of ``path`` that give hive columns: those below ``root`` (none
    when it is None), or with ``whole_path`` every directory of the path."""

def tfds_split(path: str) -> Optional[str]:
    """The split of a TFDS shard ``{name}-{split}.tfrecord-{i}-of-{n}``, else None."""

def tfx_split(rel_dir: str) -> Optional[str]:
    """The split of the nearest ``Split-{split}`` component of a directory text."""

def detect_layout(paths: list[str], rel_dirs: list[Optional[str]]) -> int:
    """``LAYOUT_TFDS``, ``LAYOUT_TFX`` or ``LAYOUT_NONE`` for listed files (``rel_dirs``:
    each file's directory below its root, None for a file named directly)."""

def layout_owns_column(layout: int, name: str) -> bool:
    """True for the layout's own ``split`` column (a hive type given to it is left to
    the layout, which makes it a string)."""

def layout_adds_split(layout: int, columns: Sequence[str]) -> bool:
    """True when the layout adds its ``split`` column: a layout, and none of
    ``columns`` (the data and hive columns) is named ``split``."""

def feature_list_name(column: str, context: Collection[str]) -> str:
    """The feature list a list-of-lists ``column`` reads or writes: ``N`` for
    ``N__feature_list`` when ``N`` is in ``context`` (the context columns), else the
    column's own name."""

def description_root(roots: Sequence[Optional[str]], layout: int) -> bool:
    """Whether a read of files listed below ``roots`` (None: a file named itself) takes
    the tfsql writer's description in ``roots[0]``: one root for every file, and no TFDS
    / TFX ``layout``."""

def written_partitions(
    user_typed: bool, hive_off: bool, hive: Sequence[str], described: Sequence[str]
) -> Tuple[list[int], int]:
    """A tfsql writer's partition columns (``described``, in its description's order) over
    the ``hive`` columns a read found: per hive column the described column whose type it
    takes (-1: the hive typing rule's stands), and how many described columns (the first
    that many, all of them) are null columns because no ``key=value`` directory was found.
    A read that types hive columns itself or turns hive partitioning off: all -1, 0."""

def tfds_merge(columns: Sequence[str], described: Sequence[str]) -> Tuple[list[int], list[int]]:
    """A TFDS ``features.json``'s types over the inferred ``columns``: per column the
    index in ``described`` whose type replaces the inferred one (-1: none), and the
    described names no column has, appended after them in their order."""

def is_tfds_metadata_name(name: str) -> bool:
    """A ``.json`` / ``.txt`` name: TFDS metadata beside ``dataset_info.json``."""

def is_tfds_info_name(name: str) -> bool:
    """``dataset_info.json``."""

def tfds_features(document: _BufferLike) -> Optional[Tuple[list[Tuple[str, Optional[str], bool, bool]], bool]]:
    """The top-level features of a TFDS ``features.json`` document, in order: ``(name,
    Arrow type name or None when undescribed, is_list, class_label)``, and whether every
    feature is described (then nothing is inferred); None when the bytes are not such a
    document."""

def is_description_name(name: str) -> bool:
    """``features.json``: a tfsql writer's column description, never data below a root."""

def render_description(columns: list[Tuple[str, str, bool]]) -> bytes:
    """The ``features.json`` of ``(name, type text, partition)`` columns (the type text
    grammar is in ``tfsql_core.h``); ValueError naming a column with other text."""

def parse_description(document: _BufferLike) -> Optional[list[Tuple[str, str, bool]]]:
    """The ``(name, type text, partition)`` columns of a tfsql writer's ``features.json``;
    None for TFDS's own or for bytes that are not such a document."""

def type_parts(
    text: str,
) -> Optional[Tuple[str, str, str, int, int, int, Tuple[Tuple[str, int], ...], Tuple[int, ...]]]:
    """``(leaf, unit, tz, precision, scale, width, ((wrap, size), ...), shape)`` of type
    text, None for other text."""

def detect_compression(head: _BufferLike) -> Optional[str]:
    """``"gzip"``, ``"zlib"`` or None (a TFRecord header, or anything else) from a
    file's first bytes."""

def sniff_format(head: _BufferLike) -> Optional[str]:
    """What a file that is not TFRecord is, from its first bytes: ``"parquet"``,
    ``"orc"``, ``"arrow"``, ``"png"``, ``"jpeg"``, ``"gzip"`` (ask again about the
    decompressed bytes), ``"json"``, ``"text"``; None for a TFRecord header or anything
    else."""

def index_sidecar_path(path: str) -> str:
    """The index sidecar of the file ``path`` (local, a URL or relative): ``.<name>.idx``
    beside it, the part up to the last ``/`` kept as it is."""

def index_fresh(index_mtime_ns: int, file_mtime_ns: int) -> bool:
    """Whether a sidecar modified at ``index_mtime_ns`` may describe a file modified at
    ``file_mtime_ns`` (nanoseconds): it is not older; an older one is stale."""

def looks_like_sequence_example(record: _BufferLike) -> bool:
    """Whether a record read as an Example is really a ``tf.train.SequenceExample``: it
    parses as one and a step of one of its feature lists (a repeated key keeping its
    last entry) has a kind set, so reading it as an Example drops its feature lists."""

def index_check(text: bytes, fd: int, file_size: int, spans: bool) -> Tuple[int, Optional[bytes], Optional[bytes]]:
    """Validate the whole index sidecar ``text`` of an uncompressed file of ``file_size``
    bytes open as ``fd`` (-1: its last record header is not read): lines ``"<offset>
    <size>"`` below 2^63, the first at 0, each ending where the next starts, the last at
    the file's end over a valid header. Returns the record count and, with ``spans``,
    the offsets and sizes as native uint64 bytes. ValueError says what is wrong."""

def intent_parse(record: bytes) -> dict[str, Any]:
    """The intent record's ``state`` ("prepared" or "committed"), ``job``, ``trash``
    (one ``_trash-...`` entry), ``replaced`` and ``created`` (lists of paths) and
    ``new`` (a list of ``(staged, final)`` tuples), every path relative to the target
    and free of ``""``, ``.`` and ``..``. ValueError when the record is not one tfsql
    wrote (the message says why)."""

def intent_view(record: bytes, rels: list[str]) -> list[Union[None, bool, str]]:
    """How to read the files ``rels`` (relative to the directory holding the intent
    record ``record``): None as they are, False left out (a new file a rollback moves
    away), or the old path of a file in the trash. ValueError when the record is not
    one tfsql wrote."""
