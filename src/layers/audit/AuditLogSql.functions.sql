-- The database functions as they are after every migration (pg_get_functiondef, schema left out).
-- AuditLogSql.ts (and AuditBuckets.ts) call audit_page; the rest are its helpers and
-- the triggers on audit_entries, which AuditLogSql writes.
-- Read-only mirror: a change goes in a new migration, then here; test/infra/SqlFunctions.test.ts
-- fails while the two differ (and prints the definition the database has).

-- audit_page, shaped by migrations 0010_one_statement, 0012_audit_pages
CREATE OR REPLACE FUNCTION audit_page(p_server_id text, p_bot_id text, p_module text, p_start timestamp with time zone, p_end timestamp with time zone, p_offset bigint, p_limit integer)
 RETURNS TABLE(total bigint, located boolean, id bigint, at timestamp with time zone, user_id text, user_name text, user_avatar text, module_name text, item_identifier bigint, event_type text, event_string text)
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_sort TO 'off'
 SET enable_incremental_sort TO 'off'
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE v_total bigint; v_located boolean; v_k bigint; v_to_at timestamptz;
BEGIN
  SELECT w.total, w.located, w.k, w.to_at INTO v_total, v_located, v_k, v_to_at
  FROM audit_page_walk(p_server_id, p_bot_id, p_module, p_start, p_end, p_offset) w;
  IF v_total = 0 OR p_offset >= v_total OR NOT v_located THEN
    RETURN QUERY SELECT v_total, v_located, NULL::bigint, NULL::timestamptz, NULL, NULL, NULL, NULL, NULL::bigint, NULL, NULL;
    RETURN;
  END IF;
  
  IF p_module IS NULL THEN
    RETURN QUERY SELECT v_total, true, id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string FROM audit_entries WHERE server_id = p_server_id AND bot_id = p_bot_id
      AND at >= coalesce(p_start, '-infinity') AND at <= coalesce(p_end, 'infinity') AND at < v_to_at
      ORDER BY at DESC, id DESC LIMIT p_limit OFFSET v_k;
  ELSE
    RETURN QUERY SELECT v_total, true, id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string FROM audit_entries WHERE module_name = p_module AND server_id = p_server_id
      AND bot_id = p_bot_id AND at >= coalesce(p_start, '-infinity') AND at <= coalesce(p_end, 'infinity') AND at < v_to_at
      ORDER BY at DESC, id DESC LIMIT p_limit OFFSET v_k;
  END IF;
END $function$;

-- audit_page_walk, shaped by migrations 0012_audit_pages
CREATE OR REPLACE FUNCTION audit_page_walk(p_server_id text, p_bot_id text, p_module text, p_start timestamp with time zone, p_end timestamp with time zone, p_offset bigint, OUT total bigint, OUT located boolean, OUT k bigint, OUT to_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
DECLARE
  v_level integer := 2; v_seconds bigint := (ARRAY[3600, 86400, 2764800]::bigint[])[3]; r record;
  v_lo bigint := -9223372036854775807; v_hi bigint := 9223372036854775807;
  v_bucket bigint; v_n bigint; v_found boolean := false;
BEGIN
  total := 0; located := true; k := p_offset; to_at := 'infinity';
  IF p_start IS NOT NULL THEN v_lo := audit_bucket(p_start, 2); END IF;
  IF p_end IS NOT NULL THEN v_hi := audit_bucket(p_end, 2) + 1; END IF;
  -- Every 32-day bucket: the total, and the bucket holding entry k (k then counts inside it).
  FOR r IN 
  SELECT b.bucket, b.n, CASE
      WHEN (p_start IS NULL OR to_timestamp(b.bucket * v_seconds) >= p_start)
        AND (p_end IS NULL OR to_timestamp((b.bucket + 1) * v_seconds) <= p_end) THEN b.c
      ELSE audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, v_level, b.bucket, b.n, b.c)
    END AS c
  FROM (
    SELECT s.bucket, sum(s.n)::int8 AS n, sum(CASE p_module WHEN 'forms' THEN s.forms WHEN 'photo' THEN s.photo WHEN 'forum' THEN s.forum WHEN 'rss' THEN s.rss WHEN 'streaming' THEN s.streaming WHEN 'microblog' THEN s.microblog WHEN 'video' THEN s.video ELSE s.n END)::int8 AS c FROM audit_count_shards s
    WHERE s.server_id = p_server_id AND s.bot_id = p_bot_id AND s.level = v_level AND s.bucket >= v_lo AND s.bucket < v_hi
    GROUP BY s.bucket ORDER BY s.bucket DESC
  ) b
  ORDER BY b.bucket DESC LOOP
    total := total + r.c;
    IF v_bucket IS NULL THEN
      IF k < r.c THEN v_bucket := r.bucket; v_n := r.n; ELSE k := k - r.c; END IF;
    END IF;
  END LOOP;
  IF p_offset >= total THEN RETURN; END IF;
  IF p_offset < 200 THEN k := p_offset; RETURN; END IF;
  -- Newest first, down to one sparse bucket or hour, read from its end.
  LOOP
    to_at := to_timestamp((v_bucket + 1) * v_seconds);
    EXIT WHEN v_level = 0 OR v_n <= 1000;
    v_lo := v_bucket * (v_seconds / (ARRAY[3600, 86400, 2764800]::bigint[])[v_level]);
    v_hi := (v_bucket + 1) * (v_seconds / (ARRAY[3600, 86400, 2764800]::bigint[])[v_level]);
    v_level := v_level - 1;
    v_seconds := (ARRAY[3600, 86400, 2764800]::bigint[])[v_level + 1];
    IF p_start IS NOT NULL THEN v_lo := greatest(v_lo, audit_bucket(p_start, v_level)); END IF;
    IF p_end IS NOT NULL THEN v_hi := least(v_hi, audit_bucket(p_end, v_level) + 1); END IF;
    v_found := false;
    FOR r IN 
  SELECT b.bucket, b.n, CASE
      WHEN (p_start IS NULL OR to_timestamp(b.bucket * v_seconds) >= p_start)
        AND (p_end IS NULL OR to_timestamp((b.bucket + 1) * v_seconds) <= p_end) THEN b.c
      ELSE audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, v_level, b.bucket, b.n, b.c)
    END AS c
  FROM (
    SELECT s.bucket, sum(s.n)::int8 AS n, sum(CASE p_module WHEN 'forms' THEN s.forms WHEN 'photo' THEN s.photo WHEN 'forum' THEN s.forum WHEN 'rss' THEN s.rss WHEN 'streaming' THEN s.streaming WHEN 'microblog' THEN s.microblog WHEN 'video' THEN s.video ELSE s.n END)::int8 AS c FROM audit_count_shards s
    WHERE s.server_id = p_server_id AND s.bot_id = p_bot_id AND s.level = v_level AND s.bucket >= v_lo AND s.bucket < v_hi
    GROUP BY s.bucket ORDER BY s.bucket DESC
  ) b
  ORDER BY b.bucket DESC LOOP
      IF k >= r.c THEN k := k - r.c; CONTINUE; END IF;
      v_found := true; v_bucket := r.bucket; v_n := r.n;
      EXIT;
    END LOOP;
    IF NOT v_found THEN
      -- Counts and entries disagreed (not expected: one snapshot).
      located := false;
      RETURN;
    END IF;
  END LOOP;
END $function$;

-- audit_query_count, shaped by migrations 0010_one_statement, 0012_audit_pages
CREATE OR REPLACE FUNCTION audit_query_count(p_server_id text, p_bot_id text, p_module text, p_start timestamp with time zone, p_end timestamp with time zone, p_level integer, p_bucket bigint, p_n bigint, p_c bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'auto'
 SET enable_sort TO 'on'
 SET enable_incremental_sort TO 'on'
AS $function$
#variable_conflict use_column
DECLARE
  v_from_at timestamptz := to_timestamp(p_bucket * (ARRAY[3600, 86400, 2764800]::bigint[])[p_level + 1]);
  v_to_at timestamptz := to_timestamp((p_bucket + 1) * (ARRAY[3600, 86400, 2764800]::bigint[])[p_level + 1]);
  v_ratio bigint; v_total bigint := 0; v_count bigint; r record;
BEGIN
  IF v_from_at >= coalesce(p_start, '-infinity') AND v_to_at <= coalesce(p_end, 'infinity') THEN RETURN p_c; END IF;
  IF p_level = 0 OR p_n <= 1000 THEN
    
  IF p_module IS NULL THEN
    SELECT count(*) INTO v_count FROM audit_entries WHERE server_id = p_server_id AND bot_id = p_bot_id
      AND at >= greatest(v_from_at, coalesce(p_start, '-infinity')) AND at <= coalesce(p_end, 'infinity') AND at < v_to_at ;
  ELSE
    SELECT count(*) INTO v_count FROM audit_entries WHERE module_name = p_module AND server_id = p_server_id AND bot_id = p_bot_id
      AND at >= greatest(v_from_at, coalesce(p_start, '-infinity')) AND at <= coalesce(p_end, 'infinity') AND at < v_to_at ;
  END IF;
    RETURN v_count;
  END IF;
  v_ratio := (ARRAY[3600, 86400, 2764800]::bigint[])[p_level + 1] / (ARRAY[3600, 86400, 2764800]::bigint[])[p_level];
  FOR r IN SELECT * FROM audit_query_buckets(p_server_id, p_bot_id, p_module, p_start, p_end, p_level - 1,
    p_bucket * v_ratio, (p_bucket + 1) * v_ratio) LOOP
    v_total := v_total + audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, p_level - 1, r.bucket, r.n, r.c);
  END LOOP;
  RETURN v_total;
END $function$;

-- audit_query_buckets, shaped by migrations 0010_one_statement
CREATE OR REPLACE FUNCTION audit_query_buckets(p_server_id text, p_bot_id text, p_module text, p_start timestamp with time zone, p_end timestamp with time zone, p_level integer, p_from bigint, p_to bigint)
 RETURNS TABLE(bucket bigint, n bigint, c bigint)
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
DECLARE v_from bigint := p_from; v_to bigint := p_to;
BEGIN
  IF p_start IS NOT NULL THEN v_from := greatest(v_from, audit_bucket(p_start, p_level)); END IF;
  IF p_end IS NOT NULL THEN v_to := least(v_to, audit_bucket(p_end, p_level) + 1); END IF;
  IF v_from >= v_to THEN RETURN; END IF;
  RETURN QUERY SELECT s.bucket, sum(s.n)::int8, sum(CASE p_module WHEN 'forms' THEN forms WHEN 'photo' THEN photo WHEN 'forum' THEN forum WHEN 'rss' THEN rss WHEN 'streaming' THEN streaming WHEN 'microblog' THEN microblog WHEN 'video' THEN video ELSE n END)::int8 FROM audit_count_shards s
    WHERE s.server_id = p_server_id AND s.bot_id = p_bot_id AND s.level = p_level AND s.bucket >= v_from AND s.bucket < v_to
    GROUP BY s.bucket ORDER BY s.bucket DESC;
END $function$;

-- audit_bucket, shaped by migrations 0004_audit, 0013_planned_once
CREATE OR REPLACE FUNCTION audit_bucket(at timestamp with time zone, level integer)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN (floor((EXTRACT(epoch FROM (at - '1970-01-01 00:00:00+00'::timestamp with time zone)) / ((ARRAY[3600, 86400, 2764800])[(level + 1)])::numeric)))::bigint;

-- audit_counts_add, shaped by migrations 0004_audit; fired by audit_counts_on_insert (before insert on audit_entries)
CREATE OR REPLACE FUNCTION audit_counts_add()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE total bigint; is_dense boolean;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(NEW.server_id || '/' || NEW.bot_id, audit_bucket(NEW.at, 2)));
  LOOP
    UPDATE audit_count_shards SET n = n + 1, forms = forms + (NEW.module_name = 'forms')::int, photo = photo + (NEW.module_name = 'photo')::int, forum = forum + (NEW.module_name = 'forum')::int, rss = rss + (NEW.module_name = 'rss')::int, streaming = streaming + (NEW.module_name = 'streaming')::int, microblog = microblog + (NEW.module_name = 'microblog')::int, video = video + (NEW.module_name = 'video')::int
    WHERE server_id = NEW.server_id AND bot_id = NEW.bot_id AND level = 2 AND bucket = audit_bucket(NEW.at, 2) AND shard = 0 AND NOT dense
    RETURNING n INTO total;
    EXIT WHEN FOUND;
    SELECT dense INTO is_dense FROM audit_count_shards WHERE server_id = NEW.server_id AND bot_id = NEW.bot_id AND level = 2 AND bucket = audit_bucket(NEW.at, 2) AND shard = 0;
    IF NOT FOUND THEN
      INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, n, forms, photo, forum, rss, streaming, microblog, video)
      VALUES (NEW.server_id, NEW.bot_id, 2::smallint, audit_bucket(NEW.at, 2), 0, 1, (NEW.module_name = 'forms')::int, (NEW.module_name = 'photo')::int, (NEW.module_name = 'forum')::int, (NEW.module_name = 'rss')::int, (NEW.module_name = 'streaming')::int, (NEW.module_name = 'microblog')::int, (NEW.module_name = 'video')::int)
      ON CONFLICT DO NOTHING;
      IF FOUND THEN RETURN NEW; END IF;
    ELSIF is_dense THEN
      total := NULL;
      EXIT;
    END IF;
    -- Another transaction created the month meanwhile: count on its row.
  END LOOP;
  IF total IS NOT NULL THEN
    IF total <= 1000 THEN RETURN NEW; END IF;
    -- The month just became dense: its days and hours, from the entries already there; this row is added next.
    UPDATE audit_count_shards SET dense = true WHERE server_id = NEW.server_id AND bot_id = NEW.bot_id AND level = 2 AND bucket = audit_bucket(NEW.at, 2) AND shard = 0;
    FOR lvl IN REVERSE 1..0 LOOP
      INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, n, forms, photo, forum, rss, streaming, microblog, video)
      SELECT NEW.server_id, NEW.bot_id, lvl, audit_bucket(e.at, lvl), 0, count(*),
        count(*) FILTER (WHERE e.module_name = 'forms'), count(*) FILTER (WHERE e.module_name = 'photo'), count(*) FILTER (WHERE e.module_name = 'forum'), count(*) FILTER (WHERE e.module_name = 'rss'), count(*) FILTER (WHERE e.module_name = 'streaming'), count(*) FILTER (WHERE e.module_name = 'microblog'), count(*) FILTER (WHERE e.module_name = 'video')
      FROM audit_entries e
      WHERE e.server_id = NEW.server_id AND e.bot_id = NEW.bot_id
        AND e.at >= to_timestamp(audit_bucket(NEW.at, 2) * (ARRAY[3600, 86400, 2764800])[3])
        AND e.at < to_timestamp((audit_bucket(NEW.at, 2) + 1) * (ARRAY[3600, 86400, 2764800])[3])
      GROUP BY 4 ORDER BY 4
      ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET n = EXCLUDED.n, forms = EXCLUDED.forms, photo = EXCLUDED.photo, forum = EXCLUDED.forum, rss = EXCLUDED.rss, streaming = EXCLUDED.streaming, microblog = EXCLUDED.microblog, video = EXCLUDED.video;
    END LOOP;
  END IF;
  -- A dense month: this row goes to the shard of this connection, at every level still to count.
  FOR lvl IN REVERSE (CASE WHEN total IS NULL THEN 2 ELSE 1 END)..0 LOOP
    INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, n, forms, photo, forum, rss, streaming, microblog, video)
    VALUES (NEW.server_id, NEW.bot_id, lvl, audit_bucket(NEW.at, lvl), 1 + pg_backend_pid() % 16, 1, (NEW.module_name = 'forms')::int, (NEW.module_name = 'photo')::int, (NEW.module_name = 'forum')::int, (NEW.module_name = 'rss')::int, (NEW.module_name = 'streaming')::int, (NEW.module_name = 'microblog')::int, (NEW.module_name = 'video')::int)
    ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET n = c.n + EXCLUDED.n, forms = c.forms + EXCLUDED.forms, photo = c.photo + EXCLUDED.photo, forum = c.forum + EXCLUDED.forum, rss = c.rss + EXCLUDED.rss, streaming = c.streaming + EXCLUDED.streaming, microblog = c.microblog + EXCLUDED.microblog, video = c.video + EXCLUDED.video;
  END LOOP;
  RETURN NEW;
END $function$;

-- audit_counts_sub, shaped by migrations 0004_audit; fired by audit_counts_on_delete (before delete on audit_entries)
CREATE OR REPLACE FUNCTION audit_counts_sub()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE total bigint;
BEGIN
  -- Exclusive: no insert of this month is in flight, so the sums over the shards are exact.
  PERFORM pg_advisory_xact_lock(hashtextextended(OLD.server_id || '/' || OLD.bot_id, audit_bucket(OLD.at, 2)));
  UPDATE audit_count_shards SET n = n - 1, forms = forms - (OLD.module_name = 'forms')::int, photo = photo - (OLD.module_name = 'photo')::int, forum = forum - (OLD.module_name = 'forum')::int, rss = rss - (OLD.module_name = 'rss')::int, streaming = streaming - (OLD.module_name = 'streaming')::int, microblog = microblog - (OLD.module_name = 'microblog')::int, video = video - (OLD.module_name = 'video')::int
  WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2) AND shard = 0 AND NOT dense
  RETURNING n INTO total;
  IF FOUND THEN
    IF total <= 0 THEN
      DELETE FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2) AND shard = 0;
    END IF;
    RETURN OLD;
  END IF;
  PERFORM FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2) AND shard = 0;
  IF NOT FOUND THEN RETURN OLD; END IF;
  FOR lvl IN REVERSE 2..0 LOOP
    INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, n, forms, photo, forum, rss, streaming, microblog, video)
    VALUES (OLD.server_id, OLD.bot_id, lvl, audit_bucket(OLD.at, lvl), 0, -1, -(OLD.module_name = 'forms')::int, -(OLD.module_name = 'photo')::int, -(OLD.module_name = 'forum')::int, -(OLD.module_name = 'rss')::int, -(OLD.module_name = 'streaming')::int, -(OLD.module_name = 'microblog')::int, -(OLD.module_name = 'video')::int)
    ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET n = c.n + EXCLUDED.n, forms = c.forms + EXCLUDED.forms, photo = c.photo + EXCLUDED.photo, forum = c.forum + EXCLUDED.forum, rss = c.rss + EXCLUDED.rss, streaming = c.streaming + EXCLUDED.streaming, microblog = c.microblog + EXCLUDED.microblog, video = c.video + EXCLUDED.video;
  END LOOP;
  SELECT sum(n) INTO total FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2);
  IF total <= 1000 THEN
    -- The month is no longer dense: back to one row, its days and hours go.
    UPDATE audit_count_shards SET dense = false, (n, forms, photo, forum, rss, streaming, microblog, video) = (
      SELECT sum(n)::int8, sum(forms)::int8, sum(photo)::int8, sum(forum)::int8, sum(rss)::int8, sum(streaming)::int8, sum(microblog)::int8, sum(video)::int8 FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2))
    WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2) AND shard = 0;
    DELETE FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2) AND shard <> 0;
    DELETE FROM audit_count_shards
    WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level < 2
      AND bucket >= audit_bucket(OLD.at, 2) * ((ARRAY[3600, 86400, 2764800])[3] / (ARRAY[3600, 86400, 2764800])[level + 1])
      AND bucket < (audit_bucket(OLD.at, 2) + 1) * ((ARRAY[3600, 86400, 2764800])[3] / (ARRAY[3600, 86400, 2764800])[level + 1]);
    IF total <= 0 THEN
      DELETE FROM audit_count_shards WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = 2 AND bucket = audit_bucket(OLD.at, 2);
    END IF;
  END IF;
  RETURN OLD;
END $function$;

-- audit_counts_clear, shaped by migrations 0004_audit; fired by audit_counts_on_truncate (after truncate on audit_entries)
CREATE OR REPLACE FUNCTION audit_counts_clear()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  TRUNCATE audit_count_shards;
  RETURN NULL;
END $function$;

-- audit_entries_immutable, shaped by migrations 0004_audit; fired by audit_entries_no_update (before update on audit_entries)
CREATE OR REPLACE FUNCTION audit_entries_immutable()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'audit entries are append-only';
END $function$;
