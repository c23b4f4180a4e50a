-- 0017_add_creep_alerts: creep alerts (issue 28, item 2). A series whose level drifts beyond its
-- threshold over a window with no single step beyond it (stats/creep.h) gets one alert of kind
-- 'creep' instead of a string of step alerts. Its position is the first point of the drift's
-- range (the last good commit is the point before it, as for a step), range_end the range's last
-- point; magnitude the total relative change over the range, level_before/level_after the levels
-- at its ends, p_value the Mann-Kendall test's; creep_slope the relative change per point (Theil-
-- Sen) and creep_slope_low/high its confidence interval (Sen's, at the alert's confidence). The
-- creep columns are NULL on step alerts and set on every creep alert.
ALTER TABLE alerts DROP CONSTRAINT IF EXISTS alerts_kind_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_kind_check
  CHECK (kind IN ('regression', 'improvement', 'creep'));

ALTER TABLE alerts ADD COLUMN range_end integer;
ALTER TABLE alerts ADD COLUMN creep_slope double precision;
ALTER TABLE alerts ADD COLUMN creep_slope_low double precision;
ALTER TABLE alerts ADD COLUMN creep_slope_high double precision;
ALTER TABLE alerts ADD CONSTRAINT alerts_creep_columns_check
  CHECK ((kind = 'creep') = (range_end IS NOT NULL AND creep_slope IS NOT NULL)
         AND (range_end IS NULL OR range_end >= position));
