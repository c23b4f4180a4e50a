-- 0015_run_ids_per_project: a run's id is unique within its project, not across projects
-- (issue 27). With one global key, a project posting another project's run id was answered
-- 409 "already exists": an oracle telling any ingest token which ids other projects hold. Now
-- a run is keyed (project_id, id), and each table that references a run carries the run's
-- project with it: sample_sets and verdicts get project_id, filled from their run, and
-- reference runs (project_id, id). The uuid arrays that name runs (verdicts' contender and
-- baseline runs, history_points.run_ids, alerts' last good and first bad run) name runs of
-- the row's own project (the verdict's, the series', the alert's) and are read that way.
--
-- The Grafana views keep their columns; those that join runs by id also match the project
-- (CREATE OR REPLACE VIEW, as 0010 promises). The samples view (0004) gains project_id at the
-- end.

ALTER TABLE sample_sets DROP CONSTRAINT sample_sets_run_id_fkey;
ALTER TABLE verdicts DROP CONSTRAINT verdicts_run_id_fkey;
ALTER TABLE runs DROP CONSTRAINT runs_pkey;
ALTER TABLE runs ADD PRIMARY KEY (project_id, id);

-- The big table: its indexes are dropped before every row is rewritten and built after.
ALTER TABLE sample_sets DROP CONSTRAINT sample_sets_pkey;
DROP INDEX sample_sets_series;
ALTER TABLE sample_sets ADD COLUMN project_id bigint;
UPDATE sample_sets s SET project_id = r.project_id FROM runs r WHERE r.id = s.run_id;
ALTER TABLE sample_sets ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE sample_sets ADD PRIMARY KEY (project_id, run_id, benchmark_id, metric_id);
ALTER TABLE sample_sets ADD FOREIGN KEY (project_id, run_id)
  REFERENCES runs (project_id, id) ON DELETE CASCADE;
-- Series queries: a benchmark metric's sets, joined to runs filtered by branch/testbed.
CREATE INDEX sample_sets_series ON sample_sets (benchmark_id, metric_id, run_id);

ALTER TABLE verdicts ADD COLUMN project_id bigint;
UPDATE verdicts v SET project_id = r.project_id FROM runs r WHERE r.id = v.run_id;
ALTER TABLE verdicts ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE verdicts ADD FOREIGN KEY (project_id, run_id)
  REFERENCES runs (project_id, id) ON DELETE CASCADE;
DROP INDEX verdicts_run_created;
CREATE INDEX verdicts_run_created ON verdicts (project_id, run_id, created_at DESC);

CREATE OR REPLACE VIEW samples AS
SELECT s.run_id, s.benchmark_id, s.metric_id, (u.ord - 1)::integer AS repetition, u.value,
       s.project_id
FROM sample_sets s CROSS JOIN LATERAL unnest(s.vals) WITH ORDINALITY AS u(value, ord);

CREATE OR REPLACE VIEW perfwarden_views.series_points AS
SELECT r.created_at AS time,
       r.id AS run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       c.sha AS commit_sha,
       c.author_time AS commit_time,
       r.pr,
       st.median AS value,
       st.median,
       st.mean,
       st.min,
       st.max,
       st.stddev,
       st.stddev / nullif(abs(st.mean), 0) AS cv,
       cardinality(s.vals) AS n,
       s.vals AS repetitions
FROM public.sample_sets s
JOIN public.runs r ON r.project_id = s.project_id AND r.id = s.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id
JOIN public.benchmarks b ON b.id = s.benchmark_id
JOIN public.metrics m ON m.id = s.metric_id
CROSS JOIN LATERAL (
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY u.v) AS median,
         avg(u.v) AS mean, min(u.v) AS min, max(u.v) AS max, stddev_samp(u.v) AS stddev
  FROM unnest(s.vals) AS u(v)
) st;

CREATE OR REPLACE VIEW perfwarden_views.repetitions AS
SELECT r.created_at AS time,
       r.id AS run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       c.sha AS commit_sha,
       r.pr,
       (u.ord - 1)::integer AS repetition,
       u.value
FROM public.sample_sets s
JOIN public.runs r ON r.project_id = s.project_id AND r.id = s.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id
JOIN public.benchmarks b ON b.id = s.benchmark_id
JOIN public.metrics m ON m.id = s.metric_id
CROSS JOIN LATERAL unnest(s.vals) WITH ORDINALITY AS u(value, ord);

CREATE OR REPLACE VIEW perfwarden_views.history AS
SELECT fr.created_at AS time,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       hp.position,
       c.sha AS commit_sha,
       c.author_time AS commit_time,
       c.subject AS commit_subject,
       hp.level AS value,
       cardinality(hp.vals) AS n,
       cardinality(hp.run_ids) AS run_count,
       hp.run_ids[1] AS first_run_id
FROM public.history_points hp
JOIN public.history_series hs ON hs.id = hp.series_id
JOIN public.projects p ON p.id = hs.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.commits c ON c.id = hp.commit_id
LEFT JOIN public.runs fr ON fr.project_id = hs.project_id AND fr.id = hp.run_ids[1];

CREATE OR REPLACE VIEW perfwarden_views.change_points AS
SELECT fr.created_at AS time,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       cp.position,
       gc.sha AS last_good_sha,
       bc.sha AS first_bad_sha,
       cp.magnitude,
       cp.p_value,
       cp.level_before,
       cp.level_after,
       cp.detectors,
       cp.detected_at
FROM public.change_points cp
JOIN public.history_series hs ON hs.id = cp.series_id
JOIN public.projects p ON p.id = hs.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.history_points bad ON bad.series_id = cp.series_id AND bad.position = cp.position
JOIN public.commits bc ON bc.id = bad.commit_id
LEFT JOIN public.history_points good
  ON good.series_id = cp.series_id AND good.position = cp.position - 1
LEFT JOIN public.commits gc ON gc.id = good.commit_id
LEFT JOIN public.runs fr ON fr.project_id = hs.project_id AND fr.id = bad.run_ids[1];

CREATE OR REPLACE VIEW perfwarden_views.alerts AS
SELECT coalesce(fr.created_at, a.created_at) AS time,
       a.id AS alert_id,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       a.state,
       a.state <> 'open' AS triaged,
       a.kind,
       a.cause,
       a.magnitude,
       a.ci_low,
       a.ci_high,
       a.p_value,
       a.q_value,
       a.level_before,
       a.level_after,
       a.detectors,
       a.position,
       gc.sha AS last_good_sha,
       bc.sha AS first_bad_sha,
       bc.subject AS first_bad_subject,
       a.last_good_run_id,
       a.first_bad_run_id,
       a.note,
       a.state_changed_by,
       a.state_changed_at,
       a.created_at
FROM public.alerts a
JOIN public.history_series hs ON hs.id = a.series_id
JOIN public.projects p ON p.id = a.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.commits gc ON gc.id = a.last_good_commit_id
JOIN public.commits bc ON bc.id = a.first_bad_commit_id
LEFT JOIN public.runs fr ON fr.project_id = a.project_id AND fr.id = a.first_bad_run_id;

CREATE OR REPLACE VIEW perfwarden_views.verdicts AS
SELECT v.created_at AS time,
       v.id AS verdict_id,
       v.run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       c.sha AS commit_sha,
       r.pr,
       r.target_branch,
       v.outcome,
       NOT EXISTS (SELECT 1 FROM public.verdicts n
                   WHERE n.project_id = v.project_id AND n.run_id = v.run_id
                     AND (n.created_at, n.id) > (v.created_at, v.id)) AS latest,
       (v.summary -> 'counts' ->> 'regression')::integer AS regressions,
       (v.summary -> 'counts' ->> 'improvement')::integer AS improvements,
       (v.summary -> 'counts' ->> 'equivalent')::integer AS equivalent,
       (v.summary -> 'counts' ->> 'inconclusive')::integer AS inconclusive,
       (v.summary -> 'counts' ->> 'ignored')::integer AS ignored,
       (v.summary -> 'counts' ->> 'new')::integer AS new_series,
       v.baseline ->> 'commit' AS baseline_commit_sha,
       v.baseline ->> 'branch' AS baseline_branch,
       v.baseline ->> 'selection' AS baseline_selection,
       v.algorithm_version,
       v.created_at
FROM public.verdicts v
JOIN public.runs r ON r.project_id = v.project_id AND r.id = v.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id;
