-- The app role's privileges: on every table and sequence, and on those created later;
-- and the search's functions (migration 0043), once they exist, which no one else may
-- execute (their REVOKE FROM PUBLIC is in 0043). Applied where the roles exist, after
-- every migrate too (approvals.sql.row_level_security_ensure); the partitions of the
-- events are then taken off the app role (read through their parent's policy only).
GRANT USAGE ON SCHEMA public TO approvals_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO approvals_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO approvals_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO approvals_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO approvals_app;
DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'approvals_app') THEN
    IF to_regprocedure('approvals_search_ids(tsquery)') IS NOT NULL THEN GRANT EXECUTE ON FUNCTION approvals_search_ids(tsquery) TO approvals_app; END IF;
    IF to_regprocedure('approvals_people_named(tsquery)') IS NOT NULL THEN GRANT EXECUTE ON FUNCTION approvals_people_named(tsquery) TO approvals_app; END IF;
END IF; END $$;
-- What no organisation's transaction reads (migration 0121): every organisation's
-- sessions and sign-in attempts (read and written on the login role, before and after
-- a request acts for anyone), and the key that seals approvals.tenant.
DO $$ DECLARE t text; BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'approvals_app') THEN
    FOREACH t IN ARRAY ARRAY['django_session', 'axes_accessattempt', 'axes_accessattemptexpiration',
                             'axes_accessfailurelog', 'axes_accesslog', 'approvals_tenant_key'] LOOP
        IF to_regclass(t) IS NOT NULL THEN EXECUTE format('REVOKE ALL ON %I FROM approvals_app', t); END IF;
    END LOOP;
END IF; END $$;
