-- 0005_progress_message: why a running run is not measuring yet.
--
-- The worker's progress lines may carry a "message" while it waits for a
-- quiet card ("waiting for a quiet card: pid 4242 python3; utilisation
-- 87%", issue 13).  It is shown as the run's progress.message and cleared
-- by the next progress line without one, like done and total.
ALTER TABLE runs ADD COLUMN progress_message TEXT;
