-- Convert a Parquet dataset to hive-partitioned, gzip-compressed TFRecord, and check
-- that nothing was lost. (COPY ... (FORMAT tfrecord) is DuckDB's COPY: DuckDB names the
-- files; for write_tfrecord's options, such as at most N records per file, use
-- `tfsql convert data.parquet out/ --max-rows-per-file 1000 --partition-by split,label`.)
--
-- Step 1 exports the quickstart TFRecord data to Parquet so that this script runs on
-- its own; with Parquet (or CSV: read_csv, JSON: read_json) data of your own, delete
-- step 1 and point the read_parquet calls at it.
--
-- Params:
--   src       TFRecord input of step 1 (e.g. demo-data/reviews)
--   parquet   the Parquet file to convert (step 1 writes it; its directory must exist)
--   out       output directory, replaced if it exists:
--             out/split=.../label=.../data_0.tfrecord.gz
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run convert_to_tfrecord --param src=demo-data/reviews \
--       --param parquet=demo-data/reviews.parquet --param out=demo-data/converted

-- Step 1: a Parquet file to convert.
COPY (SELECT * FROM tfrecord_scan('${src}')) TO '${parquet}' (FORMAT parquet);

-- Step 2: Parquet -> partitioned gzip TFRecord.
COPY (
    SELECT * FROM read_parquet('${parquet}')
) TO '${out}' (
    FORMAT tfrecord,
    PARTITION_BY (split, label),
    COMPRESSION gzip,
    OVERWRITE
);

-- Step 3: the same rows on both sides (0 rows differ).
SELECT (SELECT count(*) FROM read_parquet('${parquet}')) AS parquet_rows,
       (SELECT count(*) FROM tfrecord_scan('${out}')) AS tfrecord_rows,
       (SELECT count(*) FROM (
            SELECT id, text, label FROM read_parquet('${parquet}')
            EXCEPT
            SELECT id, text, label FROM tfrecord_scan('${out}'))) AS rows_differing;

-- The layout: files and records per partition directory.
SELECT split, label, count(DISTINCT filename) AS files, count(*) AS records
FROM tfrecord_scan('${out}', filename := true)
GROUP BY ALL
ORDER BY ALL;
