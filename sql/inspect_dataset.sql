-- Inspect a TFRecord dataset: its inferred schema, per-column statistics, its layout
-- on disk, and the shape of its list features.
--
-- Params:
--   src   TFRecord input: a directory, file or glob (e.g. demo-data/reviews)
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run inspect_dataset --param src=demo-data/reviews

-- Columns and their types (inferred from the records; hive partition columns last).
DESCRIBE SELECT * FROM tfrecord_scan('${src}');

-- Statistics of every column: min, max, distinct values, quartiles, null percentage.
SUMMARIZE SELECT * FROM tfrecord_scan('${src}');

-- Files and records per partition directory.
SELECT label, count(DISTINCT filename) AS files, count(*) AS records
FROM tfrecord_scan('${src}', filename := true)
GROUP BY label
ORDER BY label;

-- Missing values per column (a feature absent from a record reads as null).
SELECT count(*) AS records, count(*) - count(COLUMNS(*)) FROM tfrecord_scan('${src}');

-- Shape of the list features: fixed-size embeddings? empty tag lists?
SELECT min(len(emb)) AS emb_min_len,
       max(len(emb)) AS emb_max_len,
       count(*) FILTER (WHERE len(tags) = 0) AS rows_without_tags,
       max(len(tags)) AS max_tags
FROM tfrecord_scan('${src}');
