"""The map of where each rule lives (docs/architecture.md, "Where each rule lives") is
true: each core function is defined where the map says, each of its two call sites calls
it, and the logic of a listed rule appears nowhere outside the core and its reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tfsql"

# The rows of the map: rule, core function (core file), Python call site (codec name;
# "none" for a rule only the extension applies), extension call site.
_ROW = re.compile(
    r"^\| (?P<rule>[^|]+?) \| `(?P<function>\w+)` \(`(?P<core>[\w.]+)`\)(?: through `(?P<via>\w+)`)? \| "
    r"(?:`(?P<python>[\w/.]+)` \(`(?P<codec>codec\.\w+)`\)|none) \| `(?P<extension>[\w/.]+)` \|$",
    re.M,
)
MAP = [m.groupdict() for m in _ROW.finditer((ROOT / "docs" / "architecture.md").read_text())]

# A rule's logic, as it would read if written again outside its core function: the
# patterns that must not appear in the package outside tfsql/core/, tfsql/_reference/
# (the pure-Python twin) and the wording's one home, tfsql/messages.py (with the headers
# generated from it).
LOGIC = {
    "tfsql_plan_hive": [
        r"\bhive_int64\(",  # the int64-or-string typing rule
        r"\bis_int64_text\b",
        r"appears twice in the directories",  # the four refusals, worded once
        r"inconsistent hive partitioning",
        r"no key=value directories were found",
        r"which is not a partition key",
    ],
    "tfsql_glob_exempts": [
        r"""\[:1\] in \(["']_["'], ["']\.["']\)""",
        r"""c\[0\] == '_' \|\| c\[0\] == '\.'""",
    ],
    "tfsql_keep_listed": [r"""["']\._COPYING_["']""", r"""["']\.crc["']"""],  # the hidden endings
    "tfsql_listing_key": [r"(?i)0x9e3779b97f4a7c15"],  # the key's mixing step
    "tfsql_plan_matches": [r"\bcovered = ", r"\bany\(_below\("],  # the covered-directory rule
    "tfsql_plan": [  # the plan's steps, applied by the bindings again
        r"\bis_tfds_info_name\(",
        r"\btfsql_is_tfds_info_name\(",
        r"\bintent_view\(",
        r"\btfsql_intent_view\(",
        r"\bdetect_layout\(",
        r"\bkeep_listed\(",
        r"\btfsql_keep_listed\(",
    ],
    "TFSQL_FEATURE_LIST_SUFFIX": [r'"__feature_list"', r"#define FEATURE_LIST_SUFFIX"],
    "tfsql_looks_like_sequence_example": [  # a SequenceExample parsed again to see its lists
        r"\bSequenceExample\.FromString\(",
        r"\.feature_lists\.feature_list\b",
        r"""WhichOneof\(["']kind["']\)""",
        r"\bfeature_has_kind\(",
    ],
    "tfsql_range_at": [r"in range\(\w+, \w+, (?:piece|split_bytes|split)\)"],  # the cut written again
    "tfsql_index_sidecar_path": [r"\.%s\.idx", r"\.\{name\}\.idx"],  # the sidecar's name spelled again
    "tfsql_index_fresh": [  # the freshness comparison
        r"mtime_ns\s*(?:<|>=)\s*\w*mtime_ns",
        r"st_mtime\s*(?:<|>=)\s*\w+\.st_mtime\b",
    ],
    "tfsql_layout_owns_column": [  # the split column named again
        r"\bname == SPLIT_COLUMN\b",
        r"[!=]= SPLIT_COLUMN\b",
        r"SPLIT_COLUMN\) == 0",
        r"is_column\(b, SPLIT_COLUMN\)",
    ],
    "tfsql_layout_adds_split": [r"\bSPLIT_COLUMN (?:not )?in \w+"],  # a data or hive column holds the name
    "tfsql_tfds_merge": [  # the described field in place of the inferred one, the rest after
        r"\bdescribed\.field\(f\.name\) if f\.name in\b",
        r"\bnot in names\)",
        r"typed_by\[columns\.index\(",
        r"c < b->ndata && !\(b->sc\.cols\[c\]\.location == FEATURES",
    ],
    "tfsql_feature_list_name": [  # the suffix stripped beside a context column, again
        r"\bendswith\(FEATURE_LIST_SUFFIX\)",
        r"\+ \w+(?:->name_len)? - sl, TFSQL_FEATURE_LIST_SUFFIX",
        r"\bendswith\(FEATURE_LIST_SUFFIX\) and base\b",
    ],
    "tfsql_description_root": [  # one root for every listed file, written again
        r"len\(roots\) != 1 or None in roots",
        r"files\.items\[i\]\.root, root\) != 0",
        r"\ball\(root == first for root in roots\)",
    ],
    "tfsql_written_partitions": [  # a described partition column matched to a hive column; null columns
        r"\bif n in (?:schema\.names|described)\b",
        r"\bnpart == 0 && b->hive != HIVE_OFF\b",
    ],
    "infer_sample_file": [  # the per-file sample loop written again over a binding's reader
        r"\binfer_records_wanted\(\w+\)",
        r"\binference\.records_wanted\b",
        r"FRAME_BAD_DATA_CRC && b->skip_corrupt",
    ],
    "infer_check_missing": [r"\bf\.name not in named\b", r"held \|= set\(described\)"],
    "reader_next": [r"\.unused_data\b", r"\.unconsumed_tail\b"],  # inflating gzip members, zlib streams
    "reader_skip": [r"next \+= 16 \+ (?:d->)?length\b"],  # stepping over a record whose data CRC failed
}
# Files that may hold a listed rule's pattern: the core, the reference, the wording, the
# Python binding's exposure of single core functions.
ALLOWED = ("tfsql/core/", "tfsql/_reference/", "tfsql/messages.py", "tfsql/_native_rules.c", "tfsql/_native.pyi")


def _sources() -> list[Path]:
    return sorted(p for ext in ("*.py", "*.c", "*.h") for p in PACKAGE.rglob(ext))


def _defining(function: str) -> Path:
    """The core file that defines `function`."""
    for path in sorted((PACKAGE / "core").glob("*.c")):
        if re.search(rf"^[a-z_][\w\s*]*\b{function}\([^;]*\{{", path.read_text(), re.M):
            return path
    raise AssertionError(f"no core file defines {function}")


def test_the_map_lists_the_rules():
    assert len(MAP) >= 12, "the table of docs/architecture.md did not parse"
    assert set(LOGIC) <= {row["function"] for row in MAP}


@pytest.mark.parametrize("row", MAP, ids=lambda row: row["function"])
def test_each_rule_is_defined_in_its_core_file_and_called_from_both_bindings(row):
    function = row["function"]
    core = (PACKAGE / "core" / row["core"]).read_text()
    if function.isupper():
        assert re.search(rf"^#define {function}\b", core, re.M), f"{function} is not defined in {row['core']}"
    else:
        assert re.search(rf"^[a-z_][\w\s*]*\b{function}\([^;]*\{{", core, re.M), (
            f"{function} is not defined in {row['core']}"
        )
    if row["via"] is not None:  # applied by a core function (the plan, the sample loop) the bindings call
        via = _defining(row["via"])
        assert re.search(rf"\b{function}\(", via.read_text()), f"{via.name} ({row['via']}) does not call {function}"
        function = row["via"]
    if row["python"] is not None:
        assert row["codec"] in (ROOT / row["python"]).read_text(), f"{row['python']} does not call {row['codec']}"
    assert re.search(rf"\b{function}\b", (ROOT / row["extension"]).read_text()), (
        f"{row['extension']} does not call {function}"
    )


@pytest.mark.parametrize("function", sorted(LOGIC))
def test_a_rule_is_not_written_again_outside_its_core_function(function):
    found = []
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(ALLOWED) or relative.endswith("_gen.h"):
            continue
        text = path.read_text(errors="replace")
        found += [f"{relative}: /{p}/" for p in LOGIC[function] if re.search(p, text)]
    assert not found, f"the rule of {function} is written again outside the core: {found}"


def test_the_patterns_would_catch_the_rule_where_it_lives():
    """Each rule's patterns find it in the core or its reference (or the wording), so a
    copy would be found too."""
    homes = "\n".join(
        p.read_text(errors="replace")
        for p in _sources()
        if p.relative_to(ROOT).as_posix().startswith(("tfsql/core/", "tfsql/_reference/", "tfsql/messages.py"))
    )
    caught = {function: [p for p in patterns if re.search(p, homes)] for function, patterns in LOGIC.items()}
    assert all(caught.values()), caught
