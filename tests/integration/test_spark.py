"""The PySpark data source ``format("tfrecord")`` (tfsql.spark), in the spirit of
linkedin/spark-tfrecord's TFRecordIOSuite: Example / SequenceExample / ByteArray round
trips, partitionBy layout, overwrite and append; plus reading trees written by tfsql and
by TensorFlow (the golden files) with the same rows as ``tfsql.read_tfrecord``.

One local[2] SparkSession for the whole module, tiny data. Needs pyspark 4 and Java 17+
(skipped otherwise); run with ``pytest -m spark``.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("pyspark.sql.datasource", reason="needs pyspark >= 4.0 (pip install 'tfsql[spark]')")

import pyarrow as pa  # noqa: E402

import tfsql  # noqa: E402
import tfsql.spark  # noqa: E402
from tfsql.duckdb.extension import extension_available  # noqa: E402
from round_trip_readers import check_cli, check_duckdb, check_polars  # noqa: E402
from typed_tables import full_table  # noqa: E402

_JAVA = tfsql.spark.java_version()
if _JAVA is None or _JAVA < 17:
    pytest.skip(f"needs Java 17+ for Spark 4 (found {_JAVA})", allow_module_level=True)

from pyspark.sql import Row, SparkSession  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    ArrayType,
    BinaryType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "tensorflow"
PART_NAME = re.compile(r"^part-(\d{5})-([0-9a-f-]{36})-c(\d{3})\.tfrecord(\.gz|\.zz)?$")


@pytest.fixture(scope="module")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tfsql-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    tfsql.spark.register(session)
    yield session
    session.stop()


def files_under(root: Path) -> list[str]:
    """Every file below ``root`` as a relative posix path, sorted (not the column
    description, features.json)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != "features.json")


def float_bits(value):
    """Rows with every float replaced by its float32 bits (NaNs compare exactly)."""
    if isinstance(value, float):
        return ("f32", struct.pack("<f", value))
    if isinstance(value, dict):
        return {k: float_bits(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [float_bits(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def spark_rows(df) -> list[dict]:
    return [row.asDict(recursive=True) for row in df.collect()]


# --------------------------------------------------------------------------------------
# Example: every supported type
# --------------------------------------------------------------------------------------

EXAMPLE_SCHEMA = StructType(
    [
        StructField("id", IntegerType()),
        StructField("IntegerLabel", IntegerType()),
        StructField("LongLabel", LongType()),
        StructField("FloatLabel", FloatType()),
        StructField("DoubleLabel", DoubleType()),
        StructField("StrLabel", StringType()),
        StructField("BinaryLabel", BinaryType()),
        StructField("IntegerArrayLabel", ArrayType(IntegerType())),
        StructField("LongArrayLabel", ArrayType(LongType())),
        StructField("FloatArrayLabel", ArrayType(FloatType())),
        StructField("DoubleArrayLabel", ArrayType(DoubleType())),
        StructField("StrArrayLabel", ArrayType(StringType())),
        StructField("BinaryArrayLabel", ArrayType(BinaryType())),
    ]
)

# floats are float32-exact: TFRecord float_list holds float32 (DoubleType narrows)
EXAMPLE_ROWS = [
    (
        11,
        1,
        23,
        10.0,
        14.0,
        "r1",
        b"\xff\xf0",
        [1, 2],
        [11, 12],
        [1.25, 2.5],
        [1.5, 2.25],
        ["str1", "str2"],
        [b"\xfa\xfb", b"\xfa"],
    ),
    (
        11,
        1,
        24,
        11.0,
        15.0,
        "r2",
        b"\xfa\xfb",
        [3, 4],
        [110, 120],
        [1.25, 2.5],
        [1.5, 2.25],
        ["str3", "str4"],
        [b"\xf1\xf2", b"\xfa"],
    ),
    (
        21,
        -7,
        -(2**63),
        -0.5,
        0.125,
        "r3",
        b"\xfc\xfd",
        [5, 6],
        [2**63 - 1, 112],
        [1.75, -2.0],
        [11.5, 12.25],
        ["str5", ""],
        [b"\xf4\xf2", b""],
    ),
    # nulls: a null scalar and a null list omit the feature; an empty list stays empty
    (31, None, 7, None, None, None, None, None, [], None, [], None, []),
]


@pytest.fixture(scope="module")
def example_df(spark):
    return spark.createDataFrame(EXAMPLE_ROWS, EXAMPLE_SCHEMA)


def test_example_round_trip_every_type(spark, example_df, tmp_path):
    path = str(tmp_path / "example.tfrecord")
    example_df.write.format("tfrecord").mode("overwrite").option("recordType", "Example").save(path)

    back = spark.read.format("tfrecord").option("recordType", "Example").schema(EXAMPLE_SCHEMA).load(path)
    assert back.schema == EXAMPLE_SCHEMA
    assert spark_rows(back.orderBy("LongLabel")) == spark_rows(example_df.orderBy("LongLabel"))


def test_example_inferred_schema(spark, example_df, tmp_path):
    path = str(tmp_path / "inferred")
    example_df.write.format("tfrecord").mode("overwrite").save(path)

    back = spark.read.format("tfsql").load(path)  # the alias
    # the written types, from the column description the write kept (tfsql.description)
    types = {f.name: f.dataType for f in back.schema.fields}
    assert types == {f.name: f.dataType for f in EXAMPLE_SCHEMA.fields}
    assert all(f.nullable for f in back.schema.fields)
    row = back.where("id = 21").collect()
    assert row == [
        Row(
            id=21,
            IntegerLabel=-7,
            LongLabel=-(2**63),
            FloatLabel=-0.5,
            DoubleLabel=0.125,
            StrLabel="r3",
            BinaryLabel=bytearray(b"\xfc\xfd"),
            IntegerArrayLabel=[5, 6],
            LongArrayLabel=[2**63 - 1, 112],
            FloatArrayLabel=[1.75, -2.0],
            DoubleArrayLabel=[11.5, 12.25],
            StrArrayLabel=["str5", ""],
            BinaryArrayLabel=[bytearray(b"\xf4\xf2"), bytearray(b"")],
        )
    ]
    # the files are plain tfsql output: the core reads the same rows
    assert sorted(tfsql.read_tfrecord(path).to_pylist(), key=lambda r: r["LongLabel"]) == sorted(
        spark_rows(back), key=lambda r: r["LongLabel"]
    )


def test_user_schema_projects_and_casts(spark, example_df, tmp_path):
    path = str(tmp_path / "project")
    example_df.write.format("tfrecord").mode("overwrite").save(path)
    # a column no record holds is read as null (Spark's convention: the default here)
    back = spark.read.format("tfrecord").schema("LongLabel long, id short, missing string").load(path)
    assert sorted(back.collect()) == [
        Row(LongLabel=-(2**63), id=21, missing=None),
        Row(LongLabel=7, id=31, missing=None),
        Row(LongLabel=23, id=11, missing=None),
        Row(LongLabel=24, id=11, missing=None),
    ]
    # ... and refused, naming it, when the read asks for Python's strict rule
    strict = spark.read.format("tfrecord").option("missingColumns", "raise")
    with pytest.raises(Exception, match="names 'missing', which is in none of the sampled records"):
        strict.schema("LongLabel long, missing string").load(path).collect()


# --------------------------------------------------------------------------------------
# SequenceExample and ByteArray
# --------------------------------------------------------------------------------------

SEQUENCE_SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("IntegerArrayOfArrayLabel", ArrayType(ArrayType(IntegerType()))),
        StructField("FloatArrayOfArrayLabel", ArrayType(ArrayType(FloatType()))),
        StructField("StrArrayOfArrayLabel", ArrayType(ArrayType(StringType()))),
    ]
)
SEQUENCE_ROWS = [
    (23, [[2, 4]], [[-1.25, 0.5]], [["r1", "r2"]]),
    (24, [[-1, 0], [], [7]], [[-1.5, 0.25]], [["r3"]]),
]


def test_sequence_example_round_trip(spark, tmp_path):
    path = str(tmp_path / "sequence")
    df = spark.createDataFrame(SEQUENCE_ROWS, SEQUENCE_SCHEMA)
    df.write.format("tfrecord").mode("overwrite").option("recordType", "SequenceExample").save(path)

    back = spark.read.format("tfrecord").option("recordType", "SequenceExample").schema(SEQUENCE_SCHEMA).load(path)
    assert back.orderBy("id").collect() == df.orderBy("id").collect()

    # without .schema(...), the written types (the column description, tfsql.description)
    inferred = spark.read.format("tfrecord").option("recordType", "SequenceExample").load(path)
    assert {f.name: f.dataType for f in inferred.schema.fields} == {
        "id": LongType(),
        "IntegerArrayOfArrayLabel": ArrayType(ArrayType(IntegerType())),
        "FloatArrayOfArrayLabel": ArrayType(ArrayType(FloatType())),
        "StrArrayOfArrayLabel": ArrayType(ArrayType(StringType())),
    }
    assert inferred.where("id = 24").first().IntegerArrayOfArrayLabel == [[-1, 0], [], [7]]


def test_sequence_columns_need_sequence_example(spark, tmp_path):
    df = spark.createDataFrame(SEQUENCE_ROWS, SEQUENCE_SCHEMA)
    with pytest.raises(
        Exception,
        match="column 'IntegerArrayOfArrayLabel' is array<array<int>>: .* "
        'write with .option\\("recordType", "SequenceExample"\\)',
    ):
        df.write.format("tfrecord").mode("overwrite").save(str(tmp_path / "bad"))
    assert not (tmp_path / "bad").exists()  # the aborted job leaves nothing behind


def test_byte_array_round_trip(spark, tmp_path):
    path = str(tmp_path / "bytes")
    records = [b"\xde\xad\xbe\xef", b"", b"\x00plain"]
    df = spark.createDataFrame([(r,) for r in records], "byteArray binary")
    df.write.format("tfrecord").mode("overwrite").option("recordType", "ByteArray").save(path)

    back = spark.read.format("tfrecord").option("recordType", "ByteArray").load(path)
    assert back.schema == StructType([StructField("byteArray", BinaryType())])
    assert sorted(bytes(r.byteArray) for r in back.collect()) == sorted(records)
    assert sorted(tfsql.read_tfrecord(path, record_type="bytes").column("record").to_pylist()) == sorted(records)


# --------------------------------------------------------------------------------------
# Layout, modes, codecs
# --------------------------------------------------------------------------------------


def test_partition_by_layout(spark, example_df, tmp_path):
    out = tmp_path / "partitioned"
    df = spark.createDataFrame(EXAMPLE_ROWS[:3], EXAMPLE_SCHEMA)  # 2 tasks: rows [0] and [1, 2]
    assert df.rdd.getNumPartitions() == 2
    (
        df.write.format("tfrecord")
        .mode("overwrite")
        .option("partitionBy", "id")
        .option("codec", "org.apache.hadoop.io.compress.GzipCodec")
        .save(str(out))
    )

    files = files_under(out)
    assert "_SUCCESS" in files
    data = [f for f in files if f != "_SUCCESS"]
    assert sorted({f.split("/")[0] for f in data}) == ["id=11", "id=21"]
    assert sum(f.startswith("id=11/") for f in data) == 2  # one file per task and partition
    assert sum(f.startswith("id=21/") for f in data) == 1
    names = [PART_NAME.match(f.split("/")[1]) for f in data]
    assert all(names), data
    assert len({m.group(2) for m in names}) == 1  # one job uuid
    assert sorted(m.group(1) for m in names) == ["00000", "00001", "00001"]  # task numbers
    assert {m.group(4) for m in names} == {".gz"}
    assert not [p for p in out.iterdir() if p.name.startswith(("_temporary", "_trash"))]

    back = spark.read.format("tfrecord").load(str(out))
    assert back.schema.fieldNames()[-1] == "id"  # partition column appended last
    assert sorted((r.id, r.LongLabel) for r in back.select("id", "LongLabel").collect()) == [
        (11, 23),
        (11, 24),
        (21, -(2**63)),
    ]
    # a user schema may place and type the partition column anywhere
    typed = spark.read.format("tfrecord").schema("id string, StrLabel string").load(str(out))
    assert sorted(typed.collect()) == [
        Row(id="11", StrLabel="r1"),
        Row(id="11", StrLabel="r2"),
        Row(id="21", StrLabel="r3"),
    ]


def test_overwrite_and_append(spark, example_df, tmp_path):
    out = tmp_path / "modes"
    example_df.write.format("tfrecord").mode("append").save(str(out))
    first = set(files_under(out))
    example_df.write.format("tfrecord").mode("append").option("codec", "zlib").save(str(out))
    after_append = set(files_under(out))
    assert first < after_append
    assert spark.read.format("tfrecord").load(str(out)).count() == 8
    assert any(f.endswith(".tfrecord.zz") for f in after_append)

    example_df.limit(1).write.format("tfrecord").mode("overwrite").save(str(out))
    after_overwrite = set(files_under(out))
    assert not (after_overwrite - {"_SUCCESS"}) & after_append  # every old file is gone
    assert spark.read.format("tfrecord").load(str(out)).count() == 1
    assert [p.name for p in out.iterdir() if p.name.startswith("_")] == ["_SUCCESS"]


def test_save_modes_spark_rejects(spark, example_df, tmp_path):
    # Spark rejects these for every Python data source, before tfsql runs (documented)
    for mode in ("error", "ignore"):
        with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
            example_df.write.format("tfrecord").mode(mode).save(str(tmp_path / mode))
    with pytest.raises(Exception, match="partitioning or clustering columns do not match"):
        example_df.write.format("tfrecord").mode("append").partitionBy("id").save(str(tmp_path / "p"))


def test_option_errors(spark, example_df, tmp_path):
    def writer():
        return example_df.write.format("tfrecord").mode("overwrite")

    with pytest.raises(Exception, match="option partitionBy names 'nope', which is not a column"):
        writer().option("partitionBy", "id,nope").save(str(tmp_path / "a"))
    with pytest.raises(Exception, match="option codec 'snappy' is not supported"):
        writer().option("codec", "snappy").save(str(tmp_path / "b"))
    with pytest.raises(Exception, match="unknown write option 'partitionsby'"):
        example_df.write.format("tfrecord").mode("append").option("partitionsBy", "id").save(str(tmp_path / "c"))
    with pytest.raises(Exception, match="option recordType must be Example, SequenceExample or ByteArray"):
        spark.read.format("tfrecord").option("recordType", "Proto").load(str(tmp_path)).schema
    with pytest.raises(Exception, match="FileNotFoundError: no such file or directory: .*/missing'"):
        spark.read.format("tfrecord").load(str(tmp_path / "missing")).schema
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="no TFRecord files found in .*/empty to infer a schema from"):
        spark.read.format("tfrecord").load(str(tmp_path / "empty")).schema
    with pytest.raises(Exception, match="column 'd' has Spark type map<string,int>"):
        spark.read.format("tfrecord").schema("d map<string,int>").load(str(GOLDEN / "tabular.tfrecord")).collect()


# --------------------------------------------------------------------------------------
# Reading trees written by tfsql and by TensorFlow
# --------------------------------------------------------------------------------------


def test_reads_tfsql_tree_like_read_tfrecord(spark, tmp_path):
    out = str(tmp_path / "tree")
    n = 60
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "score": pa.array([i / 8 for i in range(n)], pa.float32()),
            "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in range(n)]),
            "emb": pa.array([[float(i)] * (i % 3) for i in range(n)], pa.list_(pa.float32())),
            "split": pa.array([("train", "test", None)[i % 3] for i in range(n)]),
            "day": pa.array([i % 2 for i in range(n)], pa.int64()),
        }
    )
    tfsql.write_tfrecord(table, out, partition_by=["split", "day"], compression="gzip", max_rows_per_file=7)
    expected = tfsql.read_tfrecord(out)

    df = spark.read.format("tfrecord").option("includeFilePaths", "file").load(out)
    assert df.schema.fieldNames() == expected.schema.names + ["file"]
    assert df.rdd.getNumPartitions() == len(tfsql.dataset(out).files)  # one partition per file
    rows = spark_rows(df)
    assert all(r.pop("file").startswith(out) for r in rows)
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(float_bits(rows), key=key) == sorted(float_bits(expected.to_pylist()), key=key)


def test_one_large_file_reads_as_byte_range_partitions(spark, tmp_path):
    out = str(tmp_path / "one")
    n = 5000
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": ["x" * (i % 40) for i in range(n)]})
    tfsql.write_tfrecord(table, out, num_shards=1)
    expected = tfsql.read_tfrecord(out)
    [path] = tfsql.dataset(out).files
    size = os.path.getsize(path)
    df = spark.read.format("tfrecord").option("maxPartitionBytes", "10000").option("includeFilePaths", "f").load(out)
    assert df.rdd.getNumPartitions() == -(-size // 10000) >= 8
    rows = df.collect()
    assert [r.id for r in rows] == expected.column("id").to_pylist()  # no loss, no duplicate, in order
    assert [r.s for r in rows] == expected.column("s").to_pylist()
    whole = spark.read.format("tfrecord").option("maxPartitionBytes", "all").load(out)
    assert whole.rdd.getNumPartitions() == 1


def test_spec_read_options_reach_the_scan(spark, tmp_path):
    """inferBytes, hiddenFilePrefix, batchBytes, maxRecordBytes (from tfsql.options) reach
    the driver's discovery and the tasks' scans."""
    out = tmp_path / "opts"
    tfsql.write_tfrecord(pa.table({"id": list(range(40))}), str(out))
    tfsql.write_tfrecord(pa.table({"id": [100, 101]}), str(out / "zz_extra.tfrecord"))

    def reader():
        return spark.read.format("tfrecord").option("inferBytes", "100").option("batchBytes", "64")

    assert reader().load(str(out)).count() == 42
    assert sorted(r.id for r in reader().option("HiddenFilePrefix", "zz_").load(str(out)).collect()) == list(range(40))
    with pytest.raises(Exception, match="exceeds max_record_bytes=4"):
        reader().option("maxRecordBytes", "4").schema("id long").load(str(out)).collect()
    with pytest.raises(Exception, match="option inferSample 'some' is not supported"):
        reader().option("inferSample", "some").load(str(out)).schema
    with pytest.raises(Exception, match="options (codec and compression|compression and codec) name the same setting"):
        reader().option("codec", "gzip").option("compression", "none").load(str(out)).schema


def test_filename_pattern_numbers_the_files_of_the_job(spark, tmp_path):
    """filenamePattern's {i} counts every file of the job in task order and {n} is their
    number; maxBytesPerFile rotates each task's files; numShards is not a Spark option."""
    df = spark.range(40).repartition(2)
    out = tmp_path / "named"
    (
        df.write.format("tfrecord")
        .mode("overwrite")
        .option("filenamePattern", "train-{i:05d}-of-{n:05d}")
        .option("maxBytesPerFile", "200")
        .option("codec", "gzip")
        .save(str(out))
    )
    names = [name for name in files_under(out) if name != "_SUCCESS"]
    n = len(names)
    assert n > 2  # rotated by maxBytesPerFile
    assert names == [f"train-{i:05d}-of-{n:05d}.tfrecord.gz" for i in range(n)]
    assert sorted(tfsql.read_tfrecord(str(out)).column("id").to_pylist()) == list(range(40))
    with pytest.raises(Exception, match="already exists; the write was rolled back"):
        df.write.format("tfrecord").mode("append").option("filenamePattern", "train-{i:05d}-of-{n:05d}").option(
            "maxBytesPerFile", "200"
        ).option("codec", "gzip").save(str(out))
    assert [name for name in files_under(out) if name != "_SUCCESS"] == names
    with pytest.raises(Exception, match="unknown write option 'numshards'"):
        df.write.format("tfrecord").mode("overwrite").option("numShards", "2").save(str(tmp_path / "s"))
    with pytest.raises(Exception, match="has the field {j}"):
        df.write.format("tfrecord").mode("overwrite").option("filenamePattern", "x-{j}").save(str(tmp_path / "j"))
    # save(path) is a directory whatever its name (issue 23, finding 8)
    df.write.format("tfrecord").mode("overwrite").option("filenamePattern", "x-{i}").save(
        str(tmp_path / "one.tfrecord")
    )
    assert [name for name in files_under(tmp_path / "one.tfrecord") if name != "_SUCCESS"] == [
        "x-0.tfrecord",
        "x-1.tfrecord",
    ]


def test_filter_pushdown_prunes_partitions(spark, tmp_path):
    out = str(tmp_path / "pruned")
    table = pa.table({"x": list(range(12)), "part": [i % 4 for i in range(12)]})
    tfsql.write_tfrecord(table, out, partition_by="part")
    query = "part = 1 OR part IN (3)"
    try:
        tfsql.spark.register(spark, filter_pushdown=True)
        assert spark.conf.get(tfsql.spark.FILTER_PUSHDOWN_CONF) == "true"
        pruned = spark.read.format("tfrecord").load(out).where("part >= 2 AND x < 10")
        assert pruned.rdd.getNumPartitions() == 2
        assert sorted(r.x for r in pruned.collect()) == [2, 3, 6, 7]
        # filters Spark cannot push (an OR) read every file, with the same rows
        assert sorted(r.x for r in spark.read.format("tfrecord").load(out).where(query).collect()) == [
            1,
            3,
            5,
            7,
            9,
            11,
        ]
        off = spark.read.format("tfrecord").option("filterPushdown", "false").load(out).where("part >= 2")
        assert off.rdd.getNumPartitions() == 4
    finally:
        spark.conf.set(tfsql.spark.FILTER_PUSHDOWN_CONF, "false")
        tfsql.spark.register(spark)
    unpruned = spark.read.format("tfrecord").load(out).where("part >= 2 AND x < 10")
    assert unpruned.rdd.getNumPartitions() == 4
    assert sorted(r.x for r in unpruned.collect()) == [2, 3, 6, 7]


GOLDEN_FILES = (
    sorted(p.name for p in GOLDEN.glob("*.tfrecord*") if not p.name.endswith(".json")) if GOLDEN.exists() else []
)


@pytest.mark.skipif(not GOLDEN_FILES, reason="no TensorFlow golden files in tests/data/tensorflow")
def test_reads_tensorflow_golden_files_like_read_tfrecord(spark):
    checked = 0
    for name in GOLDEN_FILES:
        meta = json.loads((GOLDEN / (name + ".expected.json")).read_text())
        if meta["num_records"] == 0:
            continue
        record_type = {"example": "Example", "sequence_example": "SequenceExample"}[meta["record_type"]]
        path = str(GOLDEN / name)
        expected = tfsql.read_tfrecord(path, record_type=meta["record_type"])
        df = spark.read.format("tfrecord").option("recordType", record_type).load(path)
        assert df.schema.fieldNames() == expected.schema.names, name
        assert float_bits(spark_rows(df)) == float_bits(expected.to_pylist()), name
        checked += 1
    assert checked >= 1


# --------------------------------------------------------------------------------------
# No Spark needed
# --------------------------------------------------------------------------------------


def test_import_tfsql_does_not_import_pyspark():
    code = "import sys, tfsql; tfsql.read_tfrecord; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_type_mapping():
    spark_type = ArrayType(ArrayType(IntegerType()))
    assert tfsql.spark.spark_to_arrow(spark_type) == pa.list_(pa.list_(pa.int32()))
    assert tfsql.spark.arrow_to_spark(pa.list_(pa.list_(pa.int64()))) == ArrayType(ArrayType(LongType()))
    for spark_t, arrow_t in [
        (LongType(), pa.int64()),
        (FloatType(), pa.float32()),
        (StringType(), pa.string()),
        (BinaryType(), pa.binary()),
    ]:
        assert tfsql.spark.spark_to_arrow(spark_t) == arrow_t
        assert tfsql.spark.arrow_to_spark(arrow_t) == spark_t
    from pyspark.sql.types import MapType

    with pytest.raises(ValueError, match="column 'm' has Spark type map<string,int>"):
        tfsql.spark.spark_to_arrow(MapType(StringType(), IntegerType()), column="m")


def test_java_version_parsing(tmp_path):
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_392\"' >&2\n")
    fake.chmod(0o755)
    assert tfsql.spark.java_version(str(fake)) == 8
    fake.write_text("#!/bin/sh\necho 'openjdk version \"17.0.15\" 2025-04-15' >&2\n")
    assert tfsql.spark.java_version(str(fake)) == 17
    assert tfsql.spark.java_version(str(tmp_path / "missing")) is None


# --------------------------------------------------------------------------------------
# Issue 13: decimal and non-nullable read schemas, same-name SequenceExample features
# --------------------------------------------------------------------------------------


def test_decimal_read_schema_is_exact_or_an_error(spark, tmp_path):
    from decimal import Decimal

    path = str(tmp_path / "prices")
    tfsql.write_tfrecord(pa.table({"price": pa.array([2.5, 0.1, -7.25], pa.float32())}), path)
    back = spark.read.format("tfrecord").schema("price decimal(10,2)").load(path)
    assert sorted(r.price for r in back.collect()) == [Decimal("-7.25"), Decimal("0.10"), Decimal("2.50")]
    with pytest.raises(Exception, match=r"holds 2\.5, which decimal128\(10, 0\) cannot hold exactly"):
        spark.read.format("tfrecord").schema("price decimal(10,0)").load(path).collect()


def test_non_nullable_read_schema(spark, tmp_path):
    path = str(tmp_path / "nn")
    tfsql.write_tfrecord(pa.table({"x": [1, 2, None], "y": ["a", "b", "c"]}), path)
    schema = StructType([StructField("y", StringType(), nullable=False)])
    assert sorted(r.y for r in spark.read.format("tfrecord").schema(schema).load(path).collect()) == ["a", "b", "c"]
    schema = StructType([StructField("x", LongType(), nullable=False)])
    with pytest.raises(Exception, match=r"feature 'x' has no value in .*record 2"):
        spark.read.format("tfrecord").schema(schema).load(path).collect()


def test_same_name_sequence_example(spark, tmp_path):
    from tfrecord_files import sequence_example, write_records

    path = write_records(
        tmp_path / "same" / "part-0.tfrecord",
        [
            sequence_example({"int_feature": 0}, {"int_feature": [[0], [1, 2]]}),
            sequence_example({"int_feature": 1}, {"int_feature": [[3]]}),
        ],
    )
    df = spark.read.format("tfrecord").option("recordType", "SequenceExample").load(str(path.parent))
    assert sorted((r.int_feature, r.int_feature__feature_list) for r in df.collect()) == [
        (0, [[0], [1, 2]]),
        (1, [[3]]),
    ]


def test_save_always_writes_a_directory(spark, example_df, tmp_path):
    """As Spark's own formats and Spark-TFRecord: save(path) is a directory of part files
    whatever the path's name (issue 23, finding 8)."""
    n = example_df.count()
    target = tmp_path / "one.tfrecord.gz"
    example_df.repartition(2).write.format("tfrecord").mode("overwrite").option("codec", "gzip").save(str(target))
    assert target.is_dir()
    parts = sorted(p.name for p in target.iterdir() if not p.name.startswith(("_", ".")) and p.name != "features.json")
    assert len(parts) == 2 and all(name.endswith(".tfrecord.gz") for name in parts), parts
    assert sorted(tfsql.read_tfrecord(str(target)).column("id").to_pylist()) == sorted(
        r.id for r in example_df.collect()
    )
    example_df.write.format("tfrecord").mode("append").save(str(target))
    assert tfsql.read_tfrecord(str(target)).num_rows == 2 * n
    # spark-tfrecord's own test suite saves a partitioned write under a .tfrecord name
    partitioned = tmp_path / "example-partition-by-id.tfrecord"
    example_df.write.format("tfrecord").mode("overwrite").option("partitionBy", "id").save(str(partitioned))
    assert partitioned.is_dir()
    assert sorted(p.name for p in partitioned.iterdir() if p.name.startswith("id=")) == sorted(
        {f"id={r.id}" for r in example_df.collect()}
    )
    assert tfsql.read_tfrecord(str(partitioned), hive_partitioning=True).num_rows == n
    (tmp_path / "file.tfrecord").write_bytes(b"")
    with pytest.raises(Exception, match="is a file; Spark's save\\(path\\) writes a directory"):
        example_df.write.format("tfrecord").mode("overwrite").save(str(tmp_path / "file.tfrecord"))


def test_index_option_writes_each_files_index_under_its_final_name(spark, example_df, tmp_path):
    from tfsql.record_index import StaleIndexWarning, indexed_count

    out = tmp_path / "indexed"
    example_df.repartition(2).write.format("tfrecord").mode("overwrite").option("index", "true").option(
        "filenamePattern", "train-{i}-of-{n}"
    ).save(str(out))
    files = sorted(p for p in out.iterdir() if p.name.endswith(".tfrecord"))
    assert [p.name for p in files] == ["train-0-of-2.tfrecord", "train-1-of-2.tfrecord"]
    assert sorted(p.name for p in out.glob(".*.idx")) == [".train-0-of-2.tfrecord.idx", ".train-1-of-2.tfrecord.idx"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleIndexWarning)
        assert sum(indexed_count(str(p)) for p in files) == example_df.count()


def test_tfds_and_tfx_layouts_read_with_a_split_column(spark, tmp_path):
    tfds_dir = Path(__file__).resolve().parents[1] / "data" / "tfds" / "tiny_shapes" / "1.0.0"
    df = spark.read.format("tfrecord").load(str(tfds_dir))
    assert dict(df.dtypes)["split"] == "string" and dict(df.dtypes)["image"] == "binary"
    assert sorted(df.groupBy("split").count().collect()) == [Row(split="test", count=3), Row(split="train", count=5)]
    for split, ids in (("train", [1, 2]), ("eval", [10])):
        target = tmp_path / "tfx" / f"Split-{split}" / "data_tfrecord-00000-of-00001.gz"
        tfsql.write_tfrecord(pa.table({"id": ids}), str(target.with_name("x.tfrecord.gz")))
        os.rename(target.with_name("x.tfrecord.gz"), target)
    tfx = spark.read.format("tfrecord").load(str(tmp_path / "tfx"))
    assert sorted(tfx.collect()) == [Row(id=1, split="train"), Row(id=2, split="train"), Row(id=10, split="eval")]


# -- the column description (tfsql.description): types and emptiness round trip ----------

#: The full table's columns of types Spark has (no unsigned, float16, time or tensor).
SPARK_COLUMNS = [
    "b",
    "i8",
    "i16",
    "i32",
    "i64",
    "f32",
    "f64",
    "dec",
    "s",
    "bin",
    "d32",
    "ts_utc",
    "ts_us",
    "l64",
    "lstr",
]


@pytest.mark.parametrize("rows", [3, 0], ids=["rows", "empty"])
def test_spark_writes_and_reads_its_types(tmp_path, spark, rows, duckdb_api):
    table = full_table(rows).select(SPARK_COLUMNS)
    df = spark.createDataFrame(table.to_pylist(), schema=_spark_schema(table))
    target = tmp_path / "spark"
    df.write.format("tfrecord").mode("overwrite").save(str(target))
    back = spark.read.format("tfrecord").load(str(target))
    assert back.schema == df.schema
    assert sorted(back.collect(), key=repr) == sorted(df.collect(), key=repr)
    # and the Python readers read what Spark wrote with Spark's Arrow types
    assert tfsql.read_tfrecord(target).num_rows == rows
    assert tfsql.read_tfrecord(target).schema.names == SPARK_COLUMNS
    assert tfsql.read_tfrecord(target).schema.field("d32").type == pa.date32()
    # and Polars, plain DuckDB with the extension and the tfsql command read it as its engine
    # reads the Python reader's table (tests/round_trip_readers.py)
    table = tfsql.read_tfrecord(target)
    check_polars(target, table)
    check_cli(target, table, tmp_path)
    if extension_available():
        check_duckdb(target, table)


#: The Spark type each column of the full table (every type the README lists) reads as:
#: its own where Spark has it, else the nearest that holds every value exactly.
SPARK_NEAREST = {
    **{name: None for name in ["b", "i8", "i16", "i32", "i64", "f32", "f64", "dec", "s", "bin", "d32", "ts_us"]},
    "u8": "smallint",  # unsigned: the next wider signed type
    "u16": "int",
    "u32": "bigint",
    "u64": "bigint",  # tfsql writes uint64 values up to 2^63-1
    "f16": "float",
    "dec256": "double",  # Spark's decimals hold 38 digits: the double nearest the value
    "ls": "string",
    "sv": "string",
    "lbin": "binary",
    "bv": "binary",
    "fsb": "binary",
    "d64": "date",
    "ts_s": "timestamp_ntz",
    "ts_ms": "timestamp_ntz",
    "ts_ns": "bigint",  # Spark's timestamps hold microseconds: the stored nanoseconds
    "ts_utc": "timestamp",
    "ts_tz": "timestamp",
    "t32": "time(6)",
    "t64": "time(6)",
    "dur": "interval day to second",
    "l64": "array<bigint>",
    "lf32": "array<float>",
    "lstr": "array<string>",
    "lu8": "array<smallint>",
    "fsl": "array<smallint>",
    "tensor": "array<float>",  # its flat values
    "fsl2": "array<array<bigint>>",
    "dict": "string",
    "all_null": "int",
    "nothing": "void",
}


@pytest.mark.parametrize("rows", [3, 0], ids=["rows", "empty"])
def test_spark_reads_a_python_write_in_its_types(tmp_path, spark, rows):
    """Every column of the full table reads in Spark as SPARK_NEAREST says, with the
    values the Python reader gives (cast to Spark's Arrow form of that type)."""
    from tfsql.schema import decimal_to_float

    table = full_table(rows)
    tfsql.write_tfrecord(table, tmp_path / "out")
    back = spark.read.format("tfrecord").load(str(tmp_path / "out"))
    own = dict(zip(SPARK_COLUMNS, _spark_schema(table.select(SPARK_COLUMNS)).fields))
    assert {f.name: f.dataType.simpleString() for f in back.schema.fields} == {
        name: spark_type or own[name].dataType.simpleString() for name, spark_type in SPARK_NEAREST.items()
    }
    got = back.toArrow()
    python = tfsql.read_tfrecord(tmp_path / "out")
    assert got.schema.names == python.schema.names
    for field in got.schema:
        column = python.column(field.name).combine_chunks()
        if isinstance(column.type, pa.FixedShapeTensorType):
            column = column.storage
        elif pa.types.is_decimal(column.type) and column.type.precision > 38:
            column = decimal_to_float(column, pa.float64())
        assert got.column(field.name).combine_chunks().equals(column.cast(field.type)), field.name


def _spark_schema(table: pa.Table):
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(table.schema)


@pytest.mark.skipif(
    not extension_available() or tuple(int(p) for p in __import__("duckdb").__version__.split(".")[:3]) < (1, 5, 6),
    reason="native COPY needs the DuckDB extension and DuckDB >= 1.5.6",
)
def test_spark_reads_a_native_copy_decimal_as_that_decimal(tmp_path, spark, duckdb_api):
    """A DECIMAL column DuckDB's native COPY wrote (described as decimal128(p, s)) reads in
    Spark as DecimalType(p, s) with the same values, in lists too."""
    import decimal

    from round_trip_readers import plain_duckdb

    target = tmp_path / "out"
    plain_duckdb().execute(
        "COPY (SELECT {'d': d, 'l': l} AS row, part FROM (VALUES (12.34::DECIMAL(10,2), [0.5, -0.25]::DECIMAL(38,37)[], 0),"
        f" (NULL, [], 1)) t(d, l, part)) TO '{target}' (FORMAT tfrecord, PARTITION_BY (part))"
    )
    back = spark.read.format("tfrecord").load(str(target))
    types = {f.name: f.dataType.simpleString() for f in back.schema.fields}
    assert (types["d"], types["l"]) == ("decimal(10,2)", "array<decimal(38,37)>")
    d = decimal.Decimal
    rows = sorted((r["part"], r["d"], r["l"]) for r in back.collect())
    assert rows == [(0, d("12.34"), [d("0.5"), d("-0.25")]), (1, None, [])]
