"""``dprm serve``: the secured server (API for analysts, jobs in worker processes).

::

    dprm serve --db URL [--host 127.0.0.1] [--port 8000] [--workers N] [--engine ray[://ADDRESS] --shards N]

Checks the options (``--host`` must be an IP address or a name that resolves, and
HOST:PORT free to listen on), migrates the database (a SQLite file must exist:
``dprm admin --db FILE dataset add``, ``analyst add`` or ``owner add`` creates it) and
checks that it can be written (a read-only file, role or a full disk: one line, exit 2),
then serves the API (its schema at ``/openapi.json``; the pages ``/docs`` and
``/redoc`` with ``--docs``: :mod:`dprm.server.api.docs`) with uvicorn until stopped (Ctrl-C or
SIGTERM). Running jobs outlive a stop and queued jobs wait for the next start
(docs/server.md).
"""

from __future__ import annotations

import ipaddress
import socket

import typer

from dprm.cli.app import command_app
from dprm.cli.views import EngineOption, ShardsOption, check_engine
from dprm.errors import ParameterError

app = command_app()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_address(host: str, port: int) -> None:
    """Refuse a ``--host`` that is neither an IP address nor a name that resolves, and an
    address uvicorn could not listen on (taken, or not this machine's)."""
    try:
        if not host or any(c.isspace() for c in host):
            raise OSError("blank")
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError, IndexError):  # socket.gaierror is an OSError
        raise ParameterError(f"--host {host!r}: not an IP address or a host name that resolves") from None
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind(address)
    except OSError as error:
        raise ParameterError(f"--host {host} --port {port}: cannot listen there ({error.strerror or error})") from None


@app.command()
def serve(
    db: str = typer.Option(..., "--db", metavar="URL", envvar="DPRM_DB",
                           help="The database: a SQLite file (made by dprm admin ... dataset add, analyst "
                                "add or owner add), or postgresql+psycopg://..."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="ADDRESS",
                             help="Address to listen on; loopback unless told otherwise (then put TLS in front)."),
    port: int = typer.Option(8000, "--port", metavar="N", help="Port to listen on."),
    workers: int = typer.Option(2, "--workers", metavar="N", help="Jobs run at the same time (worker processes)."),
    primitive_processes: int = typer.Option(1, "--primitive-processes", metavar="N",
                                            help="Processes answering primitives (each keeps datasets loaded)."),
    rate: float = typer.Option(20.0, "--rate", metavar="R", help="Requests per second allowed per token."),
    burst: int = typer.Option(60, "--burst", metavar="N", help="Requests a token may send at once."),
    job_timeout: float = typer.Option(3600.0, "--job-timeout", metavar="SECONDS", help="Longest a job may run."),
    max_active_jobs: int = typer.Option(16, "--max-active-jobs", metavar="N",
                                        help="An analyst's jobs queued or running at once (dummy ones too)."),
    engine: EngineOption = "in-process",
    shards: ShardsOption = 2,
    processes: int = typer.Option(1, "--processes", metavar="N",
                                  help="API processes on the one address (sharing one rate limit)."),
    docs: bool = typer.Option(False, "--docs", help="Serve /docs and /redoc (Swagger UI and ReDoc, pinned "
                                                    "scripts from a CDN); off: /openapi.json only."),
) -> None:
    """Serve the analysts' API on HOST:PORT with the database at URL."""
    import logging

    import uvicorn

    from dprm.cli.console import note
    from dprm.server.app import create_app
    from dprm.server.database import Database, shown_url
    from dprm.server.limits import uvicorn_config

    if not 0 < port < 65536:
        raise ParameterError(f"--port must be between 1 and 65535, not {port}")
    if not 0 <= workers <= 256:
        raise ParameterError(f"--workers must be between 0 and 256, not {workers}")
    if not 1 <= primitive_processes <= 64:
        raise ParameterError(f"--primitive-processes must be between 1 and 64, not {primitive_processes}")
    if not rate > 0 or burst < 1:
        raise ParameterError("--rate must be positive and --burst at least 1")
    if not job_timeout > 0:
        raise ParameterError(f"--job-timeout must be positive, not {job_timeout}")
    if max_active_jobs < 1:
        raise ParameterError(f"--max-active-jobs must be at least 1, not {max_active_jobs}")
    if not 1 <= processes <= 32:
        raise ParameterError(f"--processes must be between 1 and 32, not {processes}")
    _check_address(host, port)
    address = check_engine(engine, shards)  # jobs of the miners that count through the engine are sharded
    database = Database(db, create=False)  # checks the URL and that the SQLite file exists
    database.migrate()
    problem = database.probe_write()  # a server that cannot write could charge nor record anything
    database.dispose()
    if problem is not None:
        raise ParameterError(f"--db {shown_url(database.url)}: the database cannot be written ({problem})")
    if not _loopback(host):
        note(f"listening on {host}, beyond loopback: analysts' tokens cross the network; put TLS in front")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = dict(workers=workers, primitive_processes=primitive_processes, rate=rate, burst=burst,
                    job_timeout=job_timeout, engine=address, shards=shards, max_active_jobs=max_active_jobs, docs=docs)
    shown = f"[{host}]" if ":" in host else host
    where = "API docs at /docs" if docs else "API schema at /openapi.json"
    note(f"dprm server on http://{shown}:{port} ({where}), database {shown_url(database.url)}"
         + (f", {processes} API processes" if processes > 1 else ""))
    if processes > 1:
        _serve_processes(database.url, host, port, processes, settings)
        return
    application = create_app(database.url, **settings)
    uvicorn.Server(uvicorn_config(application, host, port, log_level="warning")).run()


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _end_with_parent(parent: int) -> None:
    """Have this forked API process get SIGTERM when its parent ``parent`` dies.

    The parent's wait loop stops the other processes when one exits, but a parent
    killed by SIGKILL runs no code: without this its children would go on serving on
    the address for ever. Linux's ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` has the kernel
    send SIGTERM, which uvicorn answers as a stop (the lifespan's shutdown runs, as
    after ``kill``); a parent that died before the call is seen by its pid, and this
    process then ends at once. Elsewhere (no ``prctl``) nothing changes.

    Parameters
    ----------
    parent : int
        The pid of the process that forked this one.
    """
    import ctypes
    import ctypes.util
    import os
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):  # no libc to ask: only the pid check below
            pass
    if os.getppid() != parent:  # the parent died before the prctl: nobody would stop this one
        os._exit(0)


def _serve_processes(url: str, host: str, port: int, processes: int, settings: dict) -> None:
    """``--processes N``: N API processes forked from this one, accepting on one socket.

    The first runs the supervisor (the job workers, the dead-worker checks, the orphan
    charges); every one has its audit thread and its pool of primitive processes. The
    rate limits are one for all: the token buckets are in memory this process shares
    with the ones it forks (:class:`~dprm.server.ratelimit.SharedRateLimiter`), so a
    token gets ``rate`` per second and ``burst`` at once whichever processes its
    connections reach. This process waits; SIGTERM or Ctrl-C stops them all, and when one exits
    the others are stopped; when this one dies (even by SIGKILL) they stop too
    (:func:`_end_with_parent`).
    """
    import os
    import signal

    import uvicorn

    from dprm.server.app import ServerSettings, create_app
    from dprm.server.limits import ConnectionLimits, uvicorn_config
    from dprm.server.ratelimit import SharedRateLimiter

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(ConnectionLimits().backlog)
    limiter = SharedRateLimiter(settings["rate"], settings["burst"])  # made before the fork: shared
    defaults = ServerSettings()
    guesses = SharedRateLimiter(settings.get("guess_rate", defaults.guess_rate),
                                settings.get("guess_burst", defaults.guess_burst))
    children = []
    parent = os.getpid()
    for index in range(processes):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                _end_with_parent(parent)
                own = dict(settings, supervise=index == 0, workers=settings["workers"] if index == 0 else 0)
                application = create_app(url, limiter=limiter, guesses=guesses, **own)
                uvicorn.Server(uvicorn_config(application, host, port, log_level="warning")).run(sockets=[listener])
            except BaseException:  # noqa: BLE001 - the child's end, never the parent's code
                code = 1
            os._exit(code)
        children.append(pid)
    listener.close()

    remaining = set(children)

    def stop(signum: int, frame: object) -> None:
        for child in list(remaining):
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while remaining:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            break
        remaining.discard(pid)
        stop(signal.SIGTERM, None)  # one ended: the others follow
