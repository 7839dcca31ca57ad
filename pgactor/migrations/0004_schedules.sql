CREATE TABLE {s}.schedules (
	actor       text NOT NULL REFERENCES {s}.actors (name) ON DELETE CASCADE,
	name        text NOT NULL,
	spec        text NOT NULL,
	type        text NOT NULL,
	payload     bytea NOT NULL,
	priority    smallint NOT NULL DEFAULT 0,
	on_missed   text NOT NULL CHECK (on_missed IN ('run_once', 'skip')),
	next_at     timestamptz NOT NULL,
	last_period timestamptz,
	last_task   bigint,
	created_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (actor, name)
);
CREATE INDEX schedules_due ON {s}.schedules (actor, next_at);
CREATE TABLE {s}.unique_periods (
	actor        text NOT NULL,
	kind         text NOT NULL CHECK (kind IN ('key', 'schedule')),
	key          text NOT NULL,
	period_start timestamptz NOT NULL,
	until        timestamptz NOT NULL,
	task_id      bigint NOT NULL,
	PRIMARY KEY (actor, kind, key, period_start)
);
CREATE INDEX unique_periods_until ON {s}.unique_periods (until);
