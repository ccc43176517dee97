-- Remove duplicate examples: keep the first row (lowest id) of each distinct key.
--
-- Scraped or merged datasets repeat examples, which leaks test rows into training and
-- over-weights reposted content. Here a duplicate is a row with the same text.
--
-- Params:
--   src   TFRecord input: a directory, file or glob (e.g. demo-data/reviews)
--   out   output directory, replaced if it exists (gzip TFRecord, hive-partitioned by label)
--   key   the column(s) that define a duplicate (default: text)
--
-- Run on the quickstart data (`tfsql demo`):
--   tfsql run deduplicate --param src=demo-data/reviews --param out=demo-data/dedup

-- How many rows repeat an earlier one?
SELECT count(*) AS records,
       count(DISTINCT (${key:-text})) AS distinct_keys,
       count(*) - count(DISTINCT (${key:-text})) AS duplicates
FROM tfrecord_scan('${src}');

-- The most repeated keys.
SELECT ${key:-text}, count(*) AS copies, list(id ORDER BY id) AS ids
FROM tfrecord_scan('${src}')
GROUP BY ALL
HAVING count(*) > 1
ORDER BY copies DESC, ids
LIMIT 5;

COPY (
    SELECT *
    FROM tfrecord_scan('${src}')
    QUALIFY row_number() OVER (PARTITION BY ${key:-text} ORDER BY id) = 1
) TO '${out}' (FORMAT tfrecord, PARTITION_BY (label), COMPRESSION gzip, OVERWRITE);

SELECT count(*) AS records_kept FROM tfrecord_scan('${out}');
