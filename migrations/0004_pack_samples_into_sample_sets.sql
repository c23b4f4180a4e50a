-- 0004_pack_samples_into_sample_sets: one row per (run, benchmark, metric) holding that
-- series' repetitions in order, instead of one row per repetition.
--
-- Why: a 500 x 20 run wrote 10,000 rows and 20,000 index entries, and PostgreSQL's b-tree
-- work on them was 80% of an ingest's CPU (perf, bench/ingest_bench.cc); every reader wants a
-- series' repetitions together anyway (verdicts, series, GET run). Packed, the same run writes
-- 500 rows, and a series of 10,000 commits x 10 repetitions reads 10,000 rows, not 100,000.
-- The repetition index is the array position (1-based in SQL, 0-based in the API); the view
-- `samples` keeps the one-row-per-repetition shape for SQL readers (Grafana, ad-hoc queries).
-- With 20x fewer rows the foreign keys are affordable again, so they are back (0002 dropped
-- them from the old table) and the deletion trigger is gone.

CREATE TABLE sample_sets (
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  benchmark_id bigint NOT NULL REFERENCES benchmarks (id),
  metric_id    bigint NOT NULL REFERENCES metrics (id),
  vals         float8[] NOT NULL
               CHECK (cardinality(vals) > 0 AND array_ndims(vals) = 1 AND array_lower(vals, 1) = 1
                      AND array_position(vals, NULL) IS NULL
                      AND 'NaN'::float8 <> ALL (vals) AND 'Infinity'::float8 <> ALL (vals)
                      AND '-Infinity'::float8 <> ALL (vals)),
  PRIMARY KEY (run_id, benchmark_id, metric_id)
);
-- Series queries: a benchmark metric's sets, joined to runs filtered by branch/testbed.
CREATE INDEX sample_sets_series ON sample_sets (benchmark_id, metric_id, run_id);

INSERT INTO sample_sets (run_id, benchmark_id, metric_id, vals)
SELECT s.run_id, s.benchmark_id, s.metric_id, array_agg(s.value ORDER BY s.repetition)
FROM samples s JOIN runs r ON r.id = s.run_id
GROUP BY s.run_id, s.benchmark_id, s.metric_id;

DROP TRIGGER runs_delete_samples ON runs;
DROP FUNCTION delete_samples_of_deleted_runs();
DROP TABLE samples;

CREATE VIEW samples AS
SELECT s.run_id, s.benchmark_id, s.metric_id, (u.ord - 1)::integer AS repetition, u.value
FROM sample_sets s CROSS JOIN LATERAL unnest(s.vals) WITH ORDINALITY AS u(value, ord);
