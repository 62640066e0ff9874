"""The API's errors: a stable code, an HTTP status and a message safe for the analyst.

Every refusal the server answers is ``{"error": {"code": CODE, "message": TEXT}}``
with the status below. 4xx: the caller's fault; 5xx: the server's. Messages never
depend on the rows: a failure that may (an error raised while the data was read or
mined) is answered with a generic code and message and logged for the data owner
(the job's ``owner_error``, the audit log's ``detail``).
"""

from __future__ import annotations

__all__ = ["ApiError", "ERRORS", "error_body", "rate_limited"]

#: code -> (HTTP status, public description). The codes are part of the API.
ERRORS: dict[str, tuple[int, str]] = {
    # the request itself
    "invalid_json": (400, "the body is not valid JSON"),
    "json_too_deep": (400, "the JSON body is nested too deeply"),
    "invalid_request": (422, "the request does not match the API's schema"),
    "invalid_parameter": (422, "a parameter is out of its allowed range"),
    "invalid_epsilon": (422, "epsilon must be a positive multiple of 1e-9 within the limits"),
    "invalid_query": (422, "the query is not valid for the dataset's public schema"),
    "invalid_tree": (422, "the tree is not valid for the dataset's public schema"),
    "outside_domain": (422, "a literal holds for every value of its attribute's declared domain or for none, or a "
                            "query on every row or none: its answer is known from the public schema"),
    "unknown_algorithm": (422, "no such algorithm on this server"),
    "request_too_large": (413, "the request body is too large"),
    "request_timeout": (408, "the request body did not arrive in time"),
    "unsupported_media_type": (415, "send JSON (Content-Type: application/json)"),
    # who is asking
    "missing_token": (401, "an API token is required (Authorization: Bearer TOKEN)"),
    "invalid_token": (401, "the API token is not valid"),
    "token_expired": (401, "the API token has expired"),
    "token_disabled": (401, "the analyst's account is disabled"),
    "rate_limited": (429, "too many requests; retry later"),
    "too_many_jobs": (429, "too many of the analyst's jobs are queued or running; retry when one has finished"),
    # what is asked for
    "not_found": (404, "no such endpoint"),
    "method_not_allowed": (405, "the endpoint does not take this method"),
    "unknown_dataset": (404, "no such dataset for this analyst"),
    "unknown_job": (404, "no such job"),
    "budget_exceeded": (403, "the request would exceed the remaining privacy budget"),
    "idempotency_key_reused": (409, "the idempotency key was used for a different request"),
    "submission_pending": (409, "the form's first post is still being answered; reload the page later"),
    "job_not_done": (409, "the job has no result yet"),
    "job_failed": (409, "the job failed; it has no result"),
    "job_cancelled": (409, "the job was cancelled; it has no result"),
    "job_finished": (409, "the job has finished and cannot be cancelled"),
    "dataset_removed": (410, "the data owner removed the dataset; the job has no result"),
    # the server's side
    "dataset_changed": (503, "a file of the dataset changed on disk since it was registered"),
    "dataset_missing": (503, "a file of the dataset is missing"),
    "computation_failed": (500, "the computation failed on the server; the data owner can see why"),
    "worker_died": (500, "the worker process died; the charge is kept if it had read rows"),
    "timeout": (500, "the job ran longer than this server allows; the charge is kept"),
    "database_unavailable": (503, "the database is unavailable; retry later"),
    "database_unwritable": (503, "the database cannot be written (read-only or full); the data owner must fix it"),
    "internal_error": (500, "internal error; the data owner can see the log"),
}


class ApiError(Exception):
    """A refusal with a stable code; ``message`` must never depend on the rows.

    Examples
    --------
    >>> e = ApiError("unknown_job")
    >>> e.status, error_body(e.code, e.message)
    (404, {'error': {'code': 'unknown_job', 'message': 'no such job'}})
    """

    def __init__(self, code: str, message: str | None = None, *, headers: dict[str, str] | None = None) -> None:
        if code not in ERRORS:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.status = ERRORS[code][0]
        self.message = message if message else ERRORS[code][1]
        self.headers = headers or {}
        super().__init__(f"{code}: {self.message}")


def error_body(code: str, message: str) -> dict:
    """The JSON body of an error answer."""
    return {"error": {"code": code, "message": message}}


def rate_limited(wait: float) -> ApiError:
    """The ``429 rate_limited`` of a token whose bucket is empty, with its ``Retry-After``
    header: ``wait`` seconds rounded up, at least 1 (the API's and the pages' one answer).

    Examples
    --------
    >>> error = rate_limited(0.2)
    >>> error.status, error.headers
    (429, {'Retry-After': '1'})
    """
    return ApiError("rate_limited", headers={"Retry-After": str(max(1, round(wait + 0.5)))})
