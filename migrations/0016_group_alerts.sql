-- 0016_group_alerts: alert groups (issue 28). One culprit commit seen by several benchmarks,
-- metrics and testbeds of a project gives alerts whose commit ranges differ (each testbed
-- measured other commits) but overlap. Alerts of one branch whose ranges (last good, first bad]
-- intersect, in the order the branch's commits first ran, form one group whose range is the
-- intersection (the narrowest range that holds every member's culprit); the history worker
-- assigns them under the project's lock (server/store/pg_alert_groups.cc). A group's state is
-- its members': open while one is, and the group triage (PATCH .../alert-groups/{id}) changes
-- every member. Bisects carry the group of their alert: one bisect per group.
--
-- An alert may now also be "went_away": the history worker closes an open alert whose series
-- came back to the level before the step (docs/history.md, "Went away").
--
-- The Grafana views keep their columns (alerts gain group_id, not selected by them).

CREATE TABLE alert_groups (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  branch_id           bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  -- The group's range: the latest last good and the earliest first bad commit of its members.
  last_good_commit_id bigint NOT NULL REFERENCES commits (id) ON DELETE CASCADE,
  first_bad_commit_id bigint NOT NULL REFERENCES commits (id) ON DELETE CASCADE,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_groups_project_id ON alert_groups (project_id, id DESC);

ALTER TABLE alerts ADD COLUMN group_id bigint REFERENCES alert_groups (id) ON DELETE SET NULL;

-- Existing alerts: one group per identical range, as lists grouped them before.
INSERT INTO alert_groups (project_id, branch_id, last_good_commit_id, first_bad_commit_id,
                          created_at)
SELECT a.project_id, hs.branch_id, a.last_good_commit_id, a.first_bad_commit_id, min(a.created_at)
FROM alerts a JOIN history_series hs ON hs.id = a.series_id
GROUP BY a.project_id, hs.branch_id, a.last_good_commit_id, a.first_bad_commit_id
ORDER BY min(a.id);
UPDATE alerts a SET group_id = g.id
FROM history_series hs, alert_groups g
WHERE hs.id = a.series_id AND g.project_id = a.project_id AND g.branch_id = hs.branch_id
  AND g.last_good_commit_id = a.last_good_commit_id
  AND g.first_bad_commit_id = a.first_bad_commit_id;
CREATE INDEX alerts_group ON alerts (group_id, state);

ALTER TABLE alerts DROP CONSTRAINT alerts_state_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_state_check
  CHECK (state IN ('open', 'acknowledged', 'false_positive', 'resolved', 'went_away'));

-- The group of a bisect's alert when it was asked for: the group's one bisect.
ALTER TABLE bisect_jobs ADD COLUMN group_id bigint REFERENCES alert_groups (id) ON DELETE SET NULL;
UPDATE bisect_jobs j SET group_id = a.group_id FROM alerts a WHERE a.id = j.alert_id;
CREATE INDEX bisect_jobs_group ON bisect_jobs (group_id) WHERE group_id IS NOT NULL;

-- Where a commit sits on a branch: when its first run of the branch arrived (the order history
-- points follow), ties by commit id.
CREATE INDEX runs_project_branch_commit ON runs (project_id, branch_id, commit_id, created_at);
