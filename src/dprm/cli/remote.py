"""``dprm remote``: the analyst's command line for a dprm server, mirroring ``dprm mine``.

::

    dprm remote --url URL --token-file FILE datasets
    dprm remote --url URL --token-file FILE submit DATASET --algorithm ALG --epsilon E
                [miner options as for dprm mine] [--dry-run] [--dummy] [--wait] [--output FILE.json]
    dprm remote --url URL --token-file FILE status|result|cancel JOB [--output FILE.json]
    dprm remote --url URL --token-file FILE budget [DATASET]
    dprm remote --url URL --token-file FILE ledger [DATASET]
    dprm remote --url URL --token-file FILE stats DATASET --left QUERY --right QUERY --epsilon E
    dprm remote --url URL --token-file FILE leaf-pairs DATASET --left-tree TREE --right-tree TREE --epsilon E
    dprm remote --url URL --token-file FILE dummy DATASET [--rows N] [--seed S]

``submit`` without ``--wait`` prints the job id alone on one line (``--output`` and
``--timeout`` are refused there: they are the wait's; if standard output cannot take
it, a full disk, the error names the charged job); with ``--wait`` it says the
job id on stderr at once, waits (polling through a restarting or busy server) and
writes the result (to ``--output``, else to standard output). Whatever ends a wait
early (``--timeout``, Ctrl-C, SIGTERM, an error, an ``--output`` that cannot be
written) says what became of the charged job and the commands that reach it. A
refused request is one line ``error: ...`` on stderr and exit code 2. Queries and
trees are JSON texts or ``@FILE`` (docs/server.md; read up to 16 MiB, so that
``@/dev/zero`` or a data file named by mistake is refused, not read until memory
runs out); a number in them, and every
number option, must be finite (JSON has no NaN or infinity), and an object holds
each key once. ``--output`` is checked before the request is sent (so nothing is
charged for an answer that could not be written) and written all or nothing; a
charged primitive's answer that cannot be written after all (a full disk) says that
its ε was spent. A
request whose answer is lost after it was sent (``--request-timeout``, by default
longer than a server lets a primitive run; Ctrl-C) says that it may have been charged.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.miner_options import given_parameters, option_parameters, with_options
from dprm.client import DEFAULT_TIMEOUT, SERVER_PRIMITIVE_LIMIT
from dprm.errors import DprmError, ParameterError, short_repr

app = command_app("Use a dprm server as an analyst: datasets, jobs, primitives, budget.")

_STATE: dict[str, Any] = {}

#: Options of submit that are not miner parameters.
_OWN = ("dataset", "algorithm", "epsilon", "dry_run", "dummy", "dummy_rows", "wait", "output", "idempotency_key",
        "timeout")


#: The options every charged request shares (jobs and primitives), declared once.
DryRun = Annotated[bool, typer.Option("--dry-run", help="Only print the exact cost and your remaining budget.")]
Dummy = Annotated[bool, typer.Option("--dummy", help="Run on rows synthesised from the public schema (free).")]
DummyRows = Annotated[int, typer.Option("--dummy-rows", metavar="N", help="Rows of dummy data.")]
Output = Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE.json", dir_okay=False,
                                                help="Write the answer here (else to standard output).")]


#: The largest token file read (a token is about 60 characters).
_MAX_TOKEN_FILE = 4096


@app.callback()
def remote(
    url: Optional[str] = typer.Option(None, "--url", metavar="URL", envvar="DPRM_URL", show_default=False,
                                      help="The server, e.g. http://127.0.0.1:8000 (required)."),
    token_file: Optional[Path] = typer.Option(None, "--token-file", metavar="FILE", envvar="DPRM_TOKEN_FILE",
                                              show_default=False,
                                              help="A file holding the API token (dprm admin analyst add "
                                                   "printed it; required)."),
    request_timeout: float = typer.Option(DEFAULT_TIMEOUT, "--request-timeout", metavar="SECONDS",
                                          help="Wait this long for each answer (the default outlasts the "
                                               f"{SERVER_PRIMITIVE_LIMIT:g} s a server lets a primitive run)."),
) -> None:
    """Talk to a dprm server as an analyst."""
    _STATE.clear()
    _STATE["url"] = url
    _STATE["token_file"] = token_file
    _STATE["timeout"] = request_timeout


def _client() -> Any:
    from dprm.client import Client, check_token

    timeout = _STATE.get("timeout", DEFAULT_TIMEOUT)
    if not (math.isfinite(timeout) and timeout > 0):
        raise ParameterError(f"--request-timeout must be a positive number of seconds, not {timeout}")
    if not _STATE.get("url") or _STATE.get("token_file") is None:
        raise ParameterError("give the server and your token: dprm remote --url URL --token-file FILE ... "
                             "(or DPRM_URL and DPRM_TOKEN_FILE)")
    path: Path = _STATE["token_file"]
    try:
        with path.open("rb") as stream:
            raw = stream.read(_MAX_TOKEN_FILE + 1)
    except OSError as error:
        raise ParameterError(f"--token-file {path}: {error.strerror or error}") from None
    if len(raw) > _MAX_TOKEN_FILE:
        raise ParameterError(f"--token-file {path}: too large for a token (more than {_MAX_TOKEN_FILE} bytes)")
    token = _token_text(raw).strip()
    if not token or len(token.split()) != 1:
        raise ParameterError(f"--token-file {path}: must hold the token alone")
    try:
        token = check_token(token)
    except ParameterError as error:
        raise ParameterError(f"--token-file {path}: {error}") from None
    try:
        return Client(_STATE["url"], token, timeout=timeout)
    except ParameterError as error:
        raise ParameterError(f"--url: {error}") from None


def _token_text(raw: bytes) -> str:
    """A token file's text: ASCII, read after a byte-order mark (UTF-8, as Notepad saved files; UTF-16, as
    Windows PowerShell writes ``dprm admin analyst add ... > FILE``); a byte that is no ASCII is left as
    U+FFFD for the check to refuse.

    Examples
    --------
    >>> _token_text(b"\\xef\\xbb\\xbfdprm_1_x\\r\\n"), _token_text("dprm_1_x\\r\\n".encode("utf-16"))
    ('dprm_1_x\\r\\n', 'dprm_1_x\\r\\n')
    >>> _token_text(b"tok\\xc3\\xa9n")
    'tok\\ufffd\\ufffdn'
    """
    import codecs

    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            return "\ufffd"
    return raw.decode("ascii", errors="replace")


@contextlib.contextmanager
def _connected() -> Iterator[Any]:
    """The client of the command; SIGTERM ends it as Ctrl-C does, and an interrupt of a request that was
    sent and may be charged says so (a note) before ``interrupted``."""
    from dprm.client import RequestInterrupted

    client = _client()
    try:
        with terminate_as_interrupt():
            yield client
    except RequestInterrupted as stop:
        from dprm.cli.console import note

        note(str(stop))
        raise
    finally:
        client.close()


def _check_output(output: Optional[Path]) -> None:
    """Refuse an ``--output`` that could not be written, before the request is sent."""
    from dprm.cli.outputs import check_writable

    if output is not None:
        try:
            check_writable(output)
        except DprmError as error:
            raise ParameterError(f"--output {error}") from None


def _emit(value: Any, output: Optional[Path]) -> None:
    """JSON to --output (all or nothing: no part is left on a failure) or to standard output."""
    from dprm.cli.outputs import Outputs

    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        print(text, end="", flush=True)  # a full disk shows here, where the caller can say what was charged
        return
    plan = Outputs()
    plan.add(output, lambda path: path.write_text(text, encoding="utf-8"))
    try:
        plan.commit()
    except DprmError as error:
        raise ParameterError(f"--output {error}") from None
    from dprm.cli.console import note

    note(f"wrote {output}")


def _emit_charged(value: Any, output: Optional[Path], charged: str) -> None:
    """:func:`_emit` of an answer that was charged: if it cannot be written (a full disk), the one line
    says, after why, what was charged and how to reach it (``charged``), so that nobody pays twice; a reader
    gone (``| head -0``) ends the command quietly, with a note saying it."""
    from dprm.cli.console import StdoutClosed, note

    try:
        _emit(value, output)
    except StdoutClosed:
        note(charged)
        raise
    except OSError as error:
        raise DprmError(f"{error.filename or 'standard output'}: {error.strerror or error}; {charged}",
                        code="unwritable", data_dependent=False) from None
    except DprmError as error:
        raise DprmError(f"{error}; {charged}", code=error.code, data_dependent=False) from None


def _primitive_lost(answer: Any) -> str:
    """What a primitive's answer that could not be written cost (nothing for a dummy run)."""
    if not isinstance(answer, dict) or answer.get("dummy"):
        return "nothing was charged (dummy data)"
    return (f"the answer was charged (ε {answer.get('epsilon_exact', '?')}) and is lost: see your ledger "
            f"(dprm remote ledger)")


class _NotFinite(ValueError):
    """A number JSON cannot carry (NaN, Infinity, or a float literal beyond the float range)."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def _not_finite(text: str) -> float:
    raise _NotFinite(text)


class _RepeatedKey(ValueError):
    """A key given twice in one JSON object (json keeps the last; the server refuses the body)."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, refusing a key given twice."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _RepeatedKey(key)
        found[key] = value
    return found


#: The largest ``@FILE`` of a query or tree read (a server's request body is at most about 1 MB).
_MAX_JSON_FILE = 16 << 20

#: What a --left/--right that is not JSON is told: the CLI takes a query's JSON form.
_QUERY_HINT = ("; a query is given in its JSON form, e.g. '{\"attr\": \"a\", \"eq\": true}' "
               "(docs/server.md), not in clired's text form such as [a]")


def _json_argument(text: str, what: str, hint: str = "") -> Any:
    """A JSON text, or ``@FILE`` holding one; its numbers must be finite and its objects hold each key once.

    Examples
    --------
    >>> _json_argument('{"attr": "a", "eq": true}', "--left")
    {'attr': 'a', 'eq': True}
    >>> _json_argument('{"attr": "a", "eq": true, "eq": false}', "--left")
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: --left: the key 'eq' is given twice in one object (JSON objects hold each key once)
    """
    if text.startswith("@"):
        name = text[1:]
        try:  # read up to a bound: @/dev/zero, or a data file named by mistake, is not read until memory runs out
            with open(name, "rb") as stream:
                raw = stream.read(_MAX_JSON_FILE + 1)
        except OSError as error:
            raise ParameterError(f"{what}: {name}: {error.strerror or error}") from None
        if len(raw) > _MAX_JSON_FILE:
            raise ParameterError(f"{what}: {name}: more than {_MAX_JSON_FILE >> 20} MiB; a query or a tree is far "
                                 f"smaller (a server takes a request of about 1 MB)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ParameterError(f"{what}: {name}: not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_not_finite, parse_float=_finite_float, object_pairs_hook=_once_each)
    except _NotFinite as error:
        raise ParameterError(f"{what}: {error} is not a finite number (JSON has no NaN or infinity)") from None
    except _RepeatedKey as error:
        raise ParameterError(f"{what}: the key {short_repr(error.args[0])} is given twice in one object "
                             f"(JSON objects hold each key once)") from None
    except RecursionError:
        raise ParameterError(f"{what}: not valid JSON (nested too deeply)") from None
    except ValueError as error:
        raise ParameterError(f"{what}: not valid JSON ({getattr(error, 'msg', error)}){hint}") from None


def _finite(value: float, option: str) -> float:
    """``value`` of ``option`` if it is a finite number (JSON carries no other)."""
    if not math.isfinite(value):
        raise ParameterError(f"{option} must be a finite number, not {value}")
    return value


def _epsilon(text: str) -> Any:
    """The epsilon as typed (a decimal text is sent as it is: exact), checked before any call.

    The server's own rule (:func:`dprm.server.units.epsilon_units`): a bad ε is named
    here, not answered as a failed connection.
    """
    from dprm.server.units import epsilon_units

    text = text.strip()
    epsilon_units(text, "--epsilon")
    return text


@app.command("datasets")
def datasets_command(output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                                            help="Write the JSON here.")) -> None:
    """The datasets you may use: attribute names, types, public domains and your budget."""
    _check_output(output)
    with _connected() as client:
        _emit(client.datasets(), output)


def _algorithms() -> Any:
    from dprm.server.validation import private_algorithms

    return private_algorithms()


def submit(
    dataset: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    algorithm: str = typer.Option(..., "--algorithm", "-a", metavar="NAME",
                                  help="A private miner: alt-expm, alt-mcmc, mcmc-tree-pair, serenade-cs, serenade-es, "
                                       "serenade-es-nosens."),
    epsilon: str = typer.Option(..., "--epsilon", metavar="ε", help="Privacy budget of the job (a multiple of 1e-9)."),
    dry_run: DryRun = False,
    dummy: Dummy = False,
    dummy_rows: DummyRows = 1000,
    wait: bool = typer.Option(False, "--wait", help="Wait for the job and write its result."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                          help="With --wait (or --dry-run): write the answer here (else to standard "
                                               "output)."),
    idempotency_key: Optional[str] = typer.Option(None, "--idempotency-key", metavar="KEY",
                                                  help="Submitting again with this key returns the first job."),
    timeout: Optional[float] = typer.Option(None, "--timeout", metavar="SECONDS", help="With --wait: give up after."),
    **parameters: Any,
) -> None:
    """Submit a job (charged at once); prints its id, or with --wait writes its result.

    With --wait the job id is said on stderr at once; a wait that ends early (--timeout, Ctrl-C, an error)
    says whether the charged job still runs and how to reach it (dprm remote status / cancel / result).
    """
    algorithms = _algorithms()
    if algorithm not in algorithms:
        raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; a server runs: {', '.join(algorithms)}")
    given = given_parameters(algorithms, algorithm, parameters)
    for name, value in given.items():
        if isinstance(value, float):
            _finite(value, "--" + name.replace("_", "-"))
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise ParameterError(f"--timeout must be a positive number of seconds, not {timeout}")
    if timeout is not None and not wait:
        raise ParameterError("--timeout limits --wait: add --wait (without it submit returns at once)")
    if output is not None and not (wait or dry_run):
        raise ParameterError("--output needs --wait: without it submit prints the job id, and the result is "
                             "written later by dprm remote result JOB --output FILE")
    epsilon = _epsilon(epsilon)
    _check_output(output)
    with _connected() as client:
        answer = client.submit(dataset, algorithm, epsilon, given, idempotency_key=idempotency_key,
                               dry_run=dry_run, dummy=dummy, dummy_rows=dummy_rows)
        if dry_run:
            _emit(answer, output)
            return
        if not wait:
            from dprm.cli.console import StdoutClosed, note

            job_id = answer["id"]
            submitted = f"job {job_id} was submitted ({_cost(answer, epsilon)}): dprm remote status {job_id}"
            try:
                print(job_id, flush=True)
            except OSError as error:  # a full disk: the job was charged; its id must not be lost with the line
                raise DprmError(f"{error.filename or 'standard output'}: {error.strerror or error}; {submitted}",
                                code="unwritable", data_dependent=False) from None
            except StdoutClosed:  # (| head -0) the command still ends quietly, but not with the id unsaid
                note(submitted)
                raise
            return
        _wait_for(client, answer, epsilon, timeout, output)


def _cost(job: dict[str, Any], epsilon: str) -> str:
    """What a job was charged, in words."""
    if job.get("dummy"):
        return "dummy data: nothing charged"
    return f"ε {job.get('epsilon_exact') or epsilon} charged"


def _whereabouts(job: dict[str, Any], epsilon: str) -> str | None:
    """Where a job that a wait left stands and the commands that reach it; None for a failed or cancelled one."""
    job_id, status = job["id"], job.get("status")
    if status == "done":
        return f"job {job_id} is done: dprm remote result {job_id} --output FILE"
    if status in ("queued", "running"):
        return (f"job {job_id} is still {status} ({_cost(job, epsilon)}): dprm remote status {job_id} / "
                f"dprm remote cancel {job_id}")
    return None


def _wait_for(client: Any, job: dict[str, Any], epsilon: str, timeout: Optional[float],
              output: Optional[Path]) -> None:
    """``submit --wait``: say the job id, wait through a restarting or busy server, write the result; a wait
    that ends early says what became of the job."""
    from dprm.cli.console import note
    from dprm.client import RemoteError

    job_id = job["id"]
    state = dict(job)
    streak = {"troubled": False}

    def seen(status: dict[str, Any]) -> None:
        state.update(status, id=job_id)
        streak["troubled"] = False

    def trouble(error: RemoteError) -> None:
        if not streak["troubled"]:
            note(f"{error}; still waiting for job {job_id} (Ctrl-C stops the wait, not the job)")
        streak["troubled"] = True

    note(f"job {job_id} submitted ({_cost(state, epsilon)}); waiting for it (Ctrl-C stops the wait, not the job)")
    try:
        document = client.wait(job_id, timeout=timeout, progress=seen, trouble=trouble)
        _emit(document, output)
    except KeyboardInterrupt:
        where = _whereabouts(state, epsilon)
        if where:
            note(where)
        raise
    except OSError as error:  # standard output could not be written (a full disk)
        where = _whereabouts(state, epsilon)
        raise DprmError(f"{error.filename or 'standard output'}: {error.strerror or error}; {where}",
                        code="unwritable", data_dependent=False) from None
    except DprmError as error:
        where = _whereabouts(state, epsilon)
        if where is None:  # failed or cancelled: the job's own message
            raise DprmError(f"job {job_id}: {error}", code=error.code, data_dependent=False) from None
        if isinstance(error, RemoteError) and error.code == "wait_timeout":
            where = f"{_cost(state, epsilon)}: dprm remote status {job_id} / dprm remote cancel {job_id}"
        raise DprmError(f"{error}; {where}", code=error.code, data_dependent=False) from None


def _options() -> list:
    """The miner options of a job: the private miners' parameters a server passes on, with its limits."""
    from dprm.server.validation import NOT_PRIVATE_PARAMETERS, server_parameter_specs

    return option_parameters(_algorithms(), skip=("epsilon", *NOT_PRIVATE_PARAMETERS), specs=server_parameter_specs)


app.command("submit")(with_options(submit, "submit", _options()))


#: The most jobs ``dprm remote jobs`` may ask for (the server's limit of ``GET /v1/jobs``).
MAX_JOBS_LISTED = 500


@app.command("jobs")
def jobs_command(limit: int = typer.Option(100, "--limit", metavar="N",
                                           help=f"At most this many, newest first (1 to {MAX_JOBS_LISTED})."),
                 output: Output = None) -> None:
    """Your jobs, newest first: id, dataset, algorithm, status, ε (JSON)."""
    if not 1 <= limit <= MAX_JOBS_LISTED:
        raise ParameterError(f"--limit must be between 1 and {MAX_JOBS_LISTED}, not {limit}")
    _check_output(output)
    with _connected() as client:
        _emit(client.jobs(limit), output)


@app.command("status")
def status_command(job: str = typer.Argument(..., metavar="JOB", help="The job id."),
                   output: Output = None) -> None:
    """A job's status and progress (JSON)."""
    _check_output(output)
    with _connected() as client:
        _emit(client.status(job), output)


@app.command("result")
def result_command(job: str = typer.Argument(..., metavar="JOB", help="The job id."),
                   output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                                         help="Write the result here.")) -> None:
    """A done job's result (dprm.redescriptions/1)."""
    _check_output(output)
    with _connected() as client:
        _emit(client.result(job), output)


@app.command("cancel")
def cancel_command(job: str = typer.Argument(..., metavar="JOB", help="The job id.")) -> None:
    """Cancel a job (queued: refunded; running: kept if rows were read)."""
    with _connected() as client:
        state = client.cancel(job)
    print(f"{state['id']} {state['status']}")


@app.command("budget")
def budget_command(dataset: Optional[str] = typer.Argument(None, metavar="[DATASET]", help="Only this dataset."),
                   as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Your budgets: total, spent, remaining (exact)."""
    with _connected() as client:
        budgets = client.budget(dataset)
    if as_json:
        _emit(budgets, None)
        return
    if not budgets:  # (a dataset named without a budget is 404 unknown_dataset)
        from dprm.cli.console import note

        note("no budget on any dataset yet: the data owner grants them (dprm admin budget set)")
    for b in budgets:
        print(f"{b['dataset']}: remaining {b['exact']['remaining']} of {b['exact']['total']} "
              f"(spent {b['exact']['spent']})")


@app.command("ledger")
def ledger_command(dataset: Optional[str] = typer.Argument(None, metavar="[DATASET]", help="Only this dataset."),
                   output: Output = None) -> None:
    """Your ledger: one row per release (JSON)."""
    _check_output(output)
    with _connected() as client:
        _emit(client.ledger(dataset), output)


def _primitive_options(dry_run: bool, dummy: bool, dummy_rows: int) -> dict[str, Any]:
    return {"dry_run": dry_run, "dummy": dummy, "dummy_rows": dummy_rows}


@app.command("stats")
def stats_command(
    dataset: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    left: str = typer.Option(..., "--left", metavar="QUERY", help="Left query: JSON, or @FILE."),
    right: str = typer.Option(..., "--right", metavar="QUERY", help="Right query: JSON, or @FILE."),
    epsilon: str = typer.Option(..., "--epsilon", metavar="ε", help="Privacy budget of the call."),
    confidence: float = typer.Option(0.95, "--confidence", metavar="X",
                                     help="Level of the confidence intervals reported beside each noisy statistic, "
                                          "in (0, 1), as a job's confidence."),
    dry_run: DryRun = False,
    dummy: Dummy = False,
    dummy_rows: DummyRows = 1000,
    output: Output = None,
) -> None:
    """Noisy statistics of a redescription you propose (the [inv] primitive)."""
    left_query, right_query = _json_argument(left, "--left", _QUERY_HINT), _json_argument(right, "--right",
                                                                                           _QUERY_HINT)
    _finite(confidence, "--confidence")
    epsilon = _epsilon(epsilon)
    _check_output(output)
    with _connected() as client:
        answer = client.redescription_statistics(dataset, left_query, right_query, epsilon, confidence=confidence,
                                                 **_primitive_options(dry_run, dummy, dummy_rows))
        if dry_run:
            _emit(answer, output)
        else:
            _emit_charged(answer, output, _primitive_lost(answer))


@app.command("leaf-pairs")
def leaf_pairs_command(
    dataset: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    left_tree: str = typer.Option(..., "--left-tree", metavar="TREE", help="Tree over the left view: JSON or @FILE."),
    right_tree: str = typer.Option(..., "--right-tree", metavar="TREE", help="Tree over the right view."),
    epsilon: str = typer.Option(..., "--epsilon", metavar="ε", help="Privacy budget of the call."),
    dry_run: DryRun = False,
    dummy: Dummy = False,
    dummy_rows: DummyRows = 1000,
    output: Output = None,
) -> None:
    """Noisy counts of the leaf pairs of two trees you send (the [inv] primitive)."""
    trees = _json_argument(left_tree, "--left-tree"), _json_argument(right_tree, "--right-tree")
    epsilon = _epsilon(epsilon)
    _check_output(output)
    with _connected() as client:
        answer = client.leaf_pair_counts(dataset, *trees, epsilon, **_primitive_options(dry_run, dummy, dummy_rows))
        if dry_run:
            _emit(answer, output)
        else:
            _emit_charged(answer, output, _primitive_lost(answer))


@app.command("dummy")
def dummy_command(
    dataset: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    rows: int = typer.Option(100, "--rows", metavar="N", help="Number of rows (at most 5000)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed of the synthetic rows."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False),
) -> None:
    """Rows synthesised from the dataset's public schema only (free)."""
    _check_output(output)
    with _connected() as client:
        _emit(client.dummy_rows(dataset, rows, seed), output)
