-- Join features kept in Parquet onto TFRecord examples by id, and write the result as
-- TFRecord for training.
--
-- Step 1 makes the Parquet feature table from the examples themselves so that this
-- script runs on its own; in a real pipeline it comes from elsewhere: delete step 1
-- and point ${features} at your files (a glob such as 'features/*.parquet' works).
--
-- Params:
--   src        TFRecord input: a directory, file or glob (e.g. demo-data/reviews)
--   features   Parquet file of features keyed by id (step 1 writes it)
--   out        output directory, replaced if it exists (gzip TFRecord, hive-partitioned by label)
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run join_parquet_features --param src=demo-data/reviews \
--       --param features=demo-data/features.parquet --param out=demo-data/joined

-- Step 1: a feature table (text length, tag count, embedding norm) as Parquet.
COPY (
    SELECT id,
           length(text) AS text_chars,
           len(tags) AS n_tags,
           sqrt(list_dot_product(emb, emb)) AS emb_norm
    FROM tfrecord_scan('${src}')
) TO '${features}' (FORMAT parquet);

-- Step 2: join and write. Booleans and integers become int64_list features, doubles
-- float_list (float32).
COPY (
    SELECT examples.*, features.* EXCLUDE (id)
    FROM tfrecord_scan('${src}') AS examples
    JOIN read_parquet('${features}') AS features USING (id)
) TO '${out}' (FORMAT tfrecord, PARTITION_BY (label), COMPRESSION gzip, OVERWRITE);

-- The joined columns, as read back from the TFRecord files.
DESCRIBE SELECT * FROM tfrecord_scan('${out}');

SELECT label,
       count(*) AS records,
       round(avg(text_chars), 1) AS avg_text_chars,
       round(avg(n_tags), 2) AS avg_tags,
       round(avg(emb_norm), 2) AS avg_emb_norm
FROM tfrecord_scan('${out}')
GROUP BY label
ORDER BY label;
