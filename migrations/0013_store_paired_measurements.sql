-- 0013_store_paired_measurements: a paired verdict (POST .../verdict/paired: the baseline commit
-- and the pull request measured interleaved in blocks on one host) is a function of its
-- measurement, which is stored with it so that it can be replayed; the baseline side's values
-- live only here, never as runs or samples. NULL for the verdicts judged against stored runs.
-- Written once and read back whole, like results: json (the text as given), lz4 compressed
-- where the server has lz4.
ALTER TABLE verdicts ADD COLUMN measurement json;
DO $$
BEGIN
  ALTER TABLE verdicts ALTER COLUMN measurement SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$$;
