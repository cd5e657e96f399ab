-- Webhook endpoints and where each one's delivery stands (webhooks.go). The times of the
-- delivery and of the lease are Unix nanoseconds, 0 for none: compared, not read.
CREATE TABLE webhook_endpoints (
	id            TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''),
	url           TEXT    NOT NULL,
	types         TEXT    NOT NULL, -- comma-separated; '' is every type
	secret        TEXT    NOT NULL,
	created_at    TEXT    NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z'),
	status        TEXT    NOT NULL CHECK (status IN ('active', 'failing', 'disabled')),
	position      TEXT    NOT NULL,
	attempts      INTEGER NOT NULL DEFAULT 0,
	first_failure INTEGER NOT NULL DEFAULT 0,
	next_attempt  INTEGER NOT NULL DEFAULT 0,
	last_attempt  INTEGER NOT NULL DEFAULT 0,
	last_status   INTEGER NOT NULL DEFAULT 0,
	last_error    TEXT    NOT NULL DEFAULT '',
	-- One instance delivers to an endpoint at a time: the one named here, until the expiry.
	lease_owner   TEXT    NOT NULL DEFAULT '',
	lease_expires INTEGER NOT NULL DEFAULT 0
) STRICT;
