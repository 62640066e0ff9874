"""Alembic environment of the server's schema.

:func:`dprm.server.database.migrate` passes the engine in ``config.attributes``; this
module only runs inside alembic (importing it elsewhere, e.g. for doctests, does
nothing).
"""

from __future__ import annotations

from alembic import context


def _run() -> None:
    from dprm.server.tables import metadata

    config = context.config
    engine = config.attributes.get("dprm_engine")
    if engine is None:  # pragma: no cover - alembic's own command line
        from sqlalchemy import create_engine

        engine = create_engine(config.get_main_option("sqlalchemy.url"))
    sqlite = bool(config.attributes.get("dprm_sqlite"))
    with engine.connect() as connection:
        # On SQLite the engine given begins with BEGIN IMMEDIATE (the write lock first).
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=sqlite)
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # One migration at a time when several servers start together.
                connection.exec_driver_sql("SELECT pg_advisory_xact_lock(748201)")
            context.run_migrations()
        if connection.in_transaction():
            connection.commit()

if hasattr(context, "config"):
    _run()
