-- Rebalance labels by downsampling: keep as many rows of each label as the rarest
-- label has, chosen by a hash of the id (deterministic, unlike random()).
--
-- Params:
--   src   TFRecord input: a directory, file or glob (e.g. demo-data/reviews)
--   out   output directory, replaced if it exists (gzip TFRecord, hive-partitioned by label)
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run rebalance_labels --param src=demo-data/reviews --param out=demo-data/balanced

-- Before: rows per label.
SELECT label, count(*) AS records FROM tfrecord_scan('${src}') GROUP BY label ORDER BY label;

COPY (
    WITH examples AS (
        SELECT * FROM tfrecord_scan('${src}')
    ),
    minority AS (
        SELECT min(records) AS records
        FROM (SELECT count(*) AS records FROM examples GROUP BY label)
    )
    SELECT *
    FROM examples
    QUALIFY row_number() OVER (PARTITION BY label ORDER BY hash(id)) <= (SELECT records FROM minority)
) TO '${out}' (FORMAT tfrecord, PARTITION_BY (label), COMPRESSION gzip, OVERWRITE);

-- After: every label has the minority count.
SELECT label, count(*) AS records FROM tfrecord_scan('${out}') GROUP BY label ORDER BY label;
