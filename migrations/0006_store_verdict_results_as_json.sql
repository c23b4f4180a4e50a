-- 0006_store_verdict_results_as_json: a verdict's results (~200 KB for 500 benchmark metrics)
-- are written once and read back whole (GET .../verdict splices them as text), never queried
-- inside. As json (the text as given, checked to be JSON) instead of jsonb, storing one is not
-- parsing it into a tree with sorted keys, and reading one is not printing that tree again.
-- lz4 compresses them at a fraction of pglz's CPU (kept when the server lacks lz4).
ALTER TABLE verdicts ALTER COLUMN results DROP DEFAULT;
ALTER TABLE verdicts ALTER COLUMN results TYPE json USING results::json;
ALTER TABLE verdicts ALTER COLUMN results SET DEFAULT '[]';
DO $$
BEGIN
  ALTER TABLE verdicts ALTER COLUMN results SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$$;
