"""What a loader state resumes: its selection of records and the data they are read from.

A :class:`~tfsql.loader.Loader` state names positions in an epoch of the *selected*
records; it means the same records only over the same selection of the same files.
:func:`fingerprint` describes both from what building the dataset already holds (no
pass over the data):

- ``files``: one entry per file holding selected records, ``[name, size, mtime_ns,
  records, index]``: its path below the dataset's directory (so that a copy of the data
  elsewhere still matches), size in bytes, modification time when indexed (local
  files; None otherwise), record count and a digest of its record offsets and sizes;
- ``selection``: a digest of the selected record ids and of the files they are in.

:func:`differences` compares two fingerprints and says, in words, what differs.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> from tfsql.loader import RecordDataset
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"id": list(range(100))}), out)
>>> low, high = fingerprint(RecordDataset(out, where="id < 50")), fingerprint(RecordDataset(out, where="id >= 50"))
>>> low["files"] == high["files"], [d.split(":")[0] for d in differences(low, high)]
(True, ['the selection differs'])
"""

from __future__ import annotations

import hashlib
import posixpath
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tfsql.loader.dataset import RecordDataset

__all__ = ["fingerprint", "differences"]


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:16]


def _name(path: str, root: str | None) -> str:
    """A file's path below the directory the dataset was opened from (its name alone
    when the file itself was named)."""
    if root is None or root in ("", "/"):
        return posixpath.basename(path) if root is None else path.lstrip("/")
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else posixpath.basename(path)


def fingerprint(records: "RecordDataset") -> dict[str, Any]:
    """The ``files`` and ``selection`` of ``records`` as plain values (see the module
    docstring)."""
    files = []
    for info, entry in zip(records.dataset.selected_files, records.index.files):
        index = ""
        if entry.offsets is not None and entry.sizes is not None:
            index = _digest(
                np.ascontiguousarray(entry.offsets, "<i8").tobytes(), np.ascontiguousarray(entry.sizes, "<i8").tobytes()
            )
        files.append([_name(info.path, info.root), int(info.size), entry.mtime_ns, int(entry.count), index])
    names = "\0".join(str(f[0]) for f in files).encode()
    selection = _digest(names, np.ascontiguousarray(records.record_ids, "<i8").tobytes())
    return {"files": files, "selection": selection, "records": len(records)}


_FIELDS = ("size", "modification time", "record count", "record offsets")


def differences(state: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """What differs between the fingerprint a state was taken with and ``mine``, one
    sentence each (empty: the same records of the same data)."""
    out = []
    theirs = {f[0]: f for f in state.get("files", [])}
    ours = {f[0]: f for f in mine["files"]}
    for name in theirs.keys() - ours.keys():
        out.append(f"file {name} held selected records when the state was taken; this dataset has none in it")
    for name in ours.keys() - theirs.keys():
        out.append(f"file {name} holds selected records now; when the state was taken it held none")
    for name in sorted(theirs.keys() & ours.keys()):
        for field, was, now in zip(_FIELDS, theirs[name][1:], ours[name][1:]):
            if was != now and not (field == "modification time" and (was is None or now is None)):
                out.append(f"file {name} changed: its {field} was {was!r} when the state was taken, it is {now!r} now")
                break
    if not out and state.get("selection") != mine["selection"]:
        out.append(
            f"the selection differs: the state selected {state.get('records')} records (digest "
            f"{state.get('selection')}), this dataset selects {mine['records']} (digest {mine['selection']}): "
            "another filter, or other data"
        )
    return out
