-- 0005_add_verdict_details: what a stored verdict needs beyond its results to be shown and
-- replayed without recomputing anything: which runs were the contender (a gate that reran
-- inconclusive benchmarks pools several runs of one commit), how the baseline was chosen
-- (commit, branch, merge-base or ancestor, distance), and the summary the gate prints
-- (counts, warnings). The sample sets a verdict used are (run id, benchmark, metric) for
-- these run ids and the series named in its results.
ALTER TABLE verdicts ADD COLUMN contender_run_ids uuid[] NOT NULL DEFAULT '{}';
ALTER TABLE verdicts ADD COLUMN baseline jsonb CHECK (baseline IS NULL OR jsonb_typeof(baseline) = 'object');
ALTER TABLE verdicts ADD COLUMN summary jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(summary) = 'object');

-- Baseline selection: the runs of one branch and testbed at a set of commits.
CREATE INDEX runs_branch_testbed_commit ON runs (branch_id, testbed_id, commit_id);
