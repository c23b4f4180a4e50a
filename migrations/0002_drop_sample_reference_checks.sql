-- 0002_drop_sample_reference_checks: samples is the one table written 10,000+ rows per run.
-- PostgreSQL checks a foreign key with one query per inserted row, and these checks were the
-- largest cost of an ingest: dropping them took a 500 x 20 run from 0.21x to 0.52x of the
-- COPY rate with one client (bench/ingest_bench.cc, docs/performance.md).
-- The references are kept by construction instead: samples are written only by the ingest
-- transaction that has just inserted the run and upserted its benchmarks and metrics (neither
-- of which has a delete path), and the cascade from runs is replaced by one statement-level
-- trigger that deletes the samples of deleted runs (also when a project's deletion cascades
-- to its runs).
ALTER TABLE samples DROP CONSTRAINT samples_benchmark_id_fkey;
ALTER TABLE samples DROP CONSTRAINT samples_metric_id_fkey;
ALTER TABLE samples DROP CONSTRAINT samples_run_id_fkey;

CREATE FUNCTION delete_samples_of_deleted_runs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM samples s USING deleted_runs d WHERE s.run_id = d.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER runs_delete_samples
  AFTER DELETE ON runs
  REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION delete_samples_of_deleted_runs();
