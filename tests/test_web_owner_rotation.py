"""The owner's "New token" form over real HTTP: a repeated post rotates the token once.

A double click posted the form twice and rotated twice; the browser showed whichever
answer came back last, which could be the first rotation's token, already revoked.
The form now carries a one-time key (:mod:`dprm.server.web.resubmission`): a repeat of
it rotates nothing and shows the first rotation's token again.
"""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
httpx = pytest.importorskip("httpx")

from sqlalchemy import func, select  # noqa: E402

from dprm.server.database import Database  # noqa: E402
from dprm.server.owners import add_owner  # noqa: E402
from dprm.server.tables import audit  # noqa: E402
from dprm.server.web.owner_notices import COOKIE as NOTICE  # noqa: E402
from dprm.server.web.sessions import COOKIE as SESSION  # noqa: E402
from server_support import serve_in_thread, setup_server_db  # noqa: E402


def _field(page: str, name: str, after: str = "") -> str:
    start = page.index(after) if after else 0
    match = re.search(rf'name="{name}" value="([^"]+)"', page[start:])
    assert match, page[start:start + 2000]
    return match.group(1)


def _signed_in_owner(url: str, token: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    page = client.get("/ui/signin")
    answer = client.post("/ui/signin", data={"csrf": _field(page.text, "csrf"), "token": token})
    assert answer.status_code == 303, answer.text[:500]
    return client


def _shown_token(client: httpx.Client, notice: str) -> str | None:
    """The token the overview shows with the notice cookie ``notice`` (what the browser would show)."""
    page = client.get("/ui/owner", cookies={SESSION: client.cookies[SESSION], NOTICE: notice})
    assert page.status_code == 200
    match = re.search(r'<code class="secret" id="new-token">([^<]+)</code>', page.text)
    return None if match is None else html.unescape(match.group(1))


def _works(url: str, token: str) -> bool:
    return httpx.get(url + "/v1/budget", headers={"Authorization": f"Bearer {token}"}, timeout=60).status_code == 200


@pytest.mark.parametrize("at_once", [False, True], ids=["one-after-the-other", "at-once"])
def test_a_new_token_form_posted_twice_rotates_once_and_shows_the_working_token(tmp_path: Path, at_once: bool
                                                                                 ) -> None:
    url = str(tmp_path / "web.db")
    tokens = setup_server_db(url, tmp_path)
    db = Database(url)
    with db.write() as connection:
        owner = add_owner(connection, "olga")
    with serve_in_thread(url, workers=0) as base:
        client = _signed_in_owner(base, owner)
        page = client.get("/ui/owner").text
        form = {name: _field(page, name, after='action="/ui/owner/analysts/bob/rotate"')
                for name in ("csrf", "submission")}
        answers: list[httpx.Response] = []

        def post() -> None:
            # a browser's double click: the same form, the same cookies, two posts
            with httpx.Client(base_url=base, timeout=60, cookies={SESSION: client.cookies[SESSION]}) as again:
                answers.append(again.post("/ui/owner/analysts/bob/rotate", data=form))

        if at_once:
            threads = [threading.Thread(target=post) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            post()
            post()
        assert [a.status_code for a in answers] == [303, 303], [a.text[:300] for a in answers]
        shown = [_shown_token(client, answer.cookies[NOTICE]) for answer in answers]
        assert shown[0] is not None and shown[0] == shown[1], shown
        assert shown[0] != tokens["bob"]
        assert _works(base, shown[0]) and not _works(base, tokens["bob"])
        client.close()
    with db.read() as connection:
        rotations = connection.execute(select(audit.c.outcome).where(audit.c.action == "ui-owner-rotate-analyst")
                                       ).scalars().all()
        assert sorted(rotations) == ["idempotent_replay", "ok"], rotations
        assert connection.execute(select(func.count()).select_from(audit)).scalar() > 0
    db.dispose()
