-- Split a dataset into train / validation / test (80 / 10 / 10) by a hash of its id.
--
-- A hash split is deterministic (running it again gives the same split) and stable
-- (a row keeps its split when rows are added or removed), which random() is not.
--
-- Params:
--   src   TFRecord input: a directory, file or glob (e.g. demo-data/reviews)
--   out   output directory, replaced if it exists: out/split=train/,
--         out/split=validation/, out/split=test/ (gzip TFRecord)
--   key   the column to hash (default: id)
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run split_train_test --param src=demo-data/reviews --param out=demo-data/split

-- The demo data already has a split column; this replaces it. For data without one,
-- remove "EXCLUDE (split)".
COPY (
    SELECT * EXCLUDE (split),
           CASE WHEN hash(${key:-id}) % 10 < 8 THEN 'train'
                WHEN hash(${key:-id}) % 10 = 8 THEN 'validation'
                ELSE 'test' END AS split
    FROM tfrecord_scan('${src}')
) TO '${out}' (FORMAT tfrecord, PARTITION_BY (split), COMPRESSION gzip, OVERWRITE);

-- What was written: records per split (read back from the new files).
SELECT split,
       count(*) AS records,
       round(100 * count(*) / sum(count(*)) OVER (), 1) AS percent
FROM tfrecord_scan('${out}')
GROUP BY split
ORDER BY records DESC;
