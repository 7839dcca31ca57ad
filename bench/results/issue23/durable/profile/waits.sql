-- Samples what the server's backends wait on, every 10 ms, :n times
-- (default 400), then counts the samples by wait event and statement: a
-- backend "CPU active" is running, any other event is waiting. Run with
-- psql beside a queue cell, as the 2-core profile did and as
-- bench/results/issue23/device/run16.sh does on 16 cores.
\if :{?n}
\else
\set n 400
\endif
SELECT set_config('waits.n', :'n', false);
CREATE TEMP TABLE w(ev text, q text);
DO $$
BEGIN
  FOR i IN 1..current_setting('waits.n')::int LOOP
    PERFORM pg_stat_clear_snapshot();
    INSERT INTO w SELECT coalesce(wait_event_type||':'||wait_event, 'CPU') || ' ' || state, left(regexp_replace(query, '\s+', ' ', 'g'), 60)
      FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle';
    INSERT INTO w SELECT 'BG '||backend_type||' '||coalesce(wait_event_type||':'||wait_event, 'CPU'), '' FROM pg_stat_activity WHERE backend_type in ('walwriter','checkpointer','background writer');
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SELECT count(*), ev, q FROM w GROUP BY 2,3 ORDER BY 1 DESC LIMIT 30;
