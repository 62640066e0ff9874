"""Alembic migrations of the server's schema (run by :func:`dprm.server.database.migrate`)."""
