"""The secured server: a data owner hosts two-view datasets, analysts mine them through an API.

The papers' client/server split (tree-based paper, section 4: objects and functions
marked [cl], [ser] and [inv]) made real. The server is the only place that reads
rows; analysts send jobs (a whole miner run) and primitives (the [inv] functions:
noisy statistics of a query pair, noisy leaf-pair counts of a tree pair) and get
back differentially private answers, paid from a persistent budget.

Modules (dependencies point down only; nothing here imports the command line):

=================  ===============================================================
``app``            the FastAPI application (:func:`~dprm.server.app.create_app`)
``api_models``     request bodies (pydantic), hence the OpenAPI schema
``guard``          ASGI middleware: body size, JSON depth, audit, no tracebacks
``auth``           tokens: generation, salted hashes, constant-time checks, rate limit
``supervisor``     runs queued jobs in worker processes, detects dead workers
``worker``         one job in its own process (``python -m dprm.server.worker``)
``pool``           the primitives' process pool
``requests``       validation of jobs and primitives against the public schema only
``primitives``     the [inv] primitives on loaded data (library functions)
``tree_json``      the JSON form of a decision tree the analyst sends
``dummy``          rows synthesised from the public schema
``datasets``       registration: hashes, the complete types file, the public schema
``accounts``       analysts and their tokens
``budget``         charges: reserve, keep, refund (the budget that never lies)
``jobs``           the job queue in the database
``audit``          the audit log writer
``database``       engines for SQLite (WAL) and PostgreSQL; alembic migrations
``tables``         the schema (one for both databases)
``units``          exact ε in integer units of 10⁻⁹
``errors``         the API's stable error codes
=================  ===============================================================

The web and database packages (``fastapi``, ``sqlalchemy``, ...) are the ``server``
extra of the project; ``import dprm.server`` alone imports none of them.
"""
