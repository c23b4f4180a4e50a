-- 0019_show_groups_and_creeps_in_grafana_views: the Grafana alerts view (0010, 0015) shows what
-- issue 28 added to alerts: the alert's group (0016) and a creep's range and slope (0017). The
-- columns are appended (CREATE OR REPLACE VIEW keeps the existing ones, their order and the read
-- role's grants): group_id, range_end (a creep's last point in `history`; NULL on steps),
-- range_end_sha (its commit), creep_slope and its interval creep_slope_low/high (relative change
-- per point; NULL on steps).
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
       a.created_at,
       a.group_id,
       a.range_end,
       rc.sha AS range_end_sha,
       a.creep_slope,
       a.creep_slope_low,
       a.creep_slope_high
FROM public.alerts a
JOIN public.history_series hs ON hs.id = a.series_id
JOIN public.projects p ON p.id = a.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.commits gc ON gc.id = a.last_good_commit_id
JOIN public.commits bc ON bc.id = a.first_bad_commit_id
LEFT JOIN public.runs fr ON fr.project_id = a.project_id AND fr.id = a.first_bad_run_id
LEFT JOIN public.history_points rp ON rp.series_id = a.series_id AND rp.position = a.range_end
LEFT JOIN public.commits rc ON rc.id = rp.commit_id;
