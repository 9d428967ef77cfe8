-- 0008_alert_webhook: a confirmed alert remembers whether the webhook has
-- been told of it, so that one a stop or a crash left unposted (still
-- queued, or between its retries) is posted at the next start instead of
-- being lost.
--
-- webhook: NULL while it is to be posted; 'delivered' (the receiver
-- answered 2xx), 'failed' (every try refused or unreachable), 'none' (the
-- daemon had no --alert-webhook when it was confirmed).  Alerts confirmed
-- before this migration count as told: an upgrade posts nothing old.
ALTER TABLE alerts ADD COLUMN webhook TEXT
    CHECK (webhook IS NULL OR webhook IN ('delivered', 'failed', 'none'));
UPDATE alerts SET webhook = 'none' WHERE confirmed_at IS NOT NULL;
