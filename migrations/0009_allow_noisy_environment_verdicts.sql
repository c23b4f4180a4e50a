-- 0009_allow_noisy_environment_verdicts: a verdict whose every regression was measured on
-- throttled GPUs (the run's gpu_throttled_fraction above 1%) has the outcome
-- 'noisy_environment': the run must be repeated on a healthy host, not fixed (docs/api.md,
-- "Verdicts"). The new set contains the old one, so no stored verdict can fail the check.
ALTER TABLE verdicts DROP CONSTRAINT verdicts_outcome_check;
ALTER TABLE verdicts ADD CONSTRAINT verdicts_outcome_check
  CHECK (outcome IN ('pass', 'regression', 'improvement', 'inconclusive', 'no_baseline',
                     'noisy_environment'));
