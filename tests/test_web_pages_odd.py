"""Faults a user of the pages met with odd requests, checked without a browser.

A page that answers a post is shown at its form's address (``/ui/datasets/NAME/jobs``
after "Check the cost" or a refused job, ``/ui/jobs/ID/cancel`` after a refused
cancel, ``/ui/owner/budgets`` after a refused grant); asked again with ``GET`` (Enter
in the address bar, a bookmark, the sign-in's way back) it was "There is no page at
this address" (404).

Same in-process app as tests/test_web_pages.py (its fixture ``site``).
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from test_web_pages import JOB_FORM, Site, _csrf, site  # noqa: E402,F401 - the fixture


def test_a_forms_address_asked_with_get_leads_to_the_page_that_holds_the_form(site: Site) -> None:
    alice, token = site.signed_in("alice")
    page = alice.get("/ui/datasets/tiny")
    key = page.text.split('name="submission" value="', 1)[1].split('"', 1)[0]
    job = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run", "submission": key},
                     follow_redirects=False).headers["location"]
    places = {"/ui/datasets/tiny/jobs": "/ui/datasets/tiny", "/ui/datasets/tiny/cost": "/ui/datasets/tiny",
              "/ui/datasets/tiny/statistics?x=1": "/ui/datasets/tiny", f"{job}/cancel": job,
              "/ui/owner/budgets": "/ui/owner", "/ui/owner/analysts/bob/rotate": "/ui/owner",
              "/ui/signout": "/ui/"}
    for address, place in places.items():
        for method in ("GET", "HEAD"):
            answer = alice.request(method, address, follow_redirects=False)
            assert (answer.status_code, answer.headers.get("location")) == (303, place), (method, address)
    # a GET signs nobody out, rotates no token: the session and bob's token still work
    assert alice.get("/ui/datasets").status_code == 200
    bob, _ = site.signed_in("bob")
    assert bob.get("/ui/datasets").status_code == 200
    # the address of a dataset's form is escaped into the place, never a way off the pages
    answer = alice.get("/ui/datasets/%2F%2Fevil.example/jobs", follow_redirects=False)
    assert answer.status_code == 404 and "location" not in answer.headers  # the path holds two more segments
    answer = alice.get("/ui/datasets/a%3Fb%23c/jobs", follow_redirects=False)
    assert answer.headers["location"] == "/ui/datasets/a%3Fb%23c"
    assert alice.get(answer.headers["location"]).status_code == 404  # no such dataset, as its page says


def test_the_sign_in_leads_back_to_a_page_shown_at_a_forms_address(site: Site) -> None:
    """The job list shown after a refused cancel (at ``/ui/jobs/ID/cancel``) refreshes itself; once
    its session has ended the refresh sends the browser to sign in with that address as ``next``,
    and the sign-in led to a 404."""
    alice, token = site.signed_in("alice")
    job = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                     follow_redirects=False).headers["location"]
    browser = site.client()  # its session has ended: no cookie
    refresh = browser.get("/ui/jobs?partial=1", headers={"HX-Request": "true",
                                                         "HX-Current-URL": f"http://127.0.0.1{job}/cancel"})
    location = refresh.headers["HX-Redirect"]
    assert location == "/ui/signin?next=" + quote(f"{job}/cancel", safe="")
    page = browser.get(location)
    signed = browser.post("/ui/signin", data={"csrf": _csrf(page.text), "token": site.tokens["alice"],
                                              "next": f"{job}/cancel"}, follow_redirects=False)
    assert signed.status_code == 303
    landing = browser.get(signed.headers["location"])
    assert landing.status_code == 200 and str(landing.url).endswith(job)
    assert "There is no page at this address" not in landing.text


def test_a_dummy_checkbox_value_the_form_cannot_send_is_refused_not_charged(site: Site) -> None:
    """``dummy=maybe`` (or ``on.``) was read as unticked: the job ran on the real rows and the
    statistics were charged, while the page re-rendered the box as ticked."""
    alice, token = site.signed_in("alice")
    before = site.remaining("alice")
    for value in ("maybe", "on.", "2"):
        job = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run", "dummy": value},
                         follow_redirects=False)
        assert job.status_code == 422 and "dummy must be ticked or not" in job.text
        assert "nothing was charged" in job.text
        cost = alice.post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": token, "dummy": value})
        assert cost.status_code == 422 and "dummy must be ticked or not" in cost.text
        stats = alice.post("/ui/datasets/tiny/statistics", data={
            "csrf": token, "left": "[a]", "right": "[x < 50]", "epsilon": "0.5", "confidence": "0.9",
            "action": "run", "dummy": value}, headers={"HX-Request": "true"})
        assert stats.status_code == 422 and "dummy must be ticked or not" in stats.text
    assert site.remaining("alice") == before
    # what a browser sends still works: "on" is free dummy data, no value a real (charged) job
    free = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run", "dummy": "on"},
                      follow_redirects=False)
    assert free.status_code == 303 and site.remaining("alice") == before
    real = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                      follow_redirects=False)
    assert real.status_code == 303 and site.remaining("alice")[1] == before[1] + 1


def test_the_owners_jobs_status_filter_refuses_a_status_no_job_has(site: Site) -> None:
    """``/ui/owner/jobs?status=Done`` (or ``zzz``) showed an empty table captioned "Jobs Done", as
    if no job were done; now one message naming the field, no rows (422), as the audit filters."""
    alice, token = site.signed_in("alice")
    alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"}, follow_redirects=False)
    olga, _ = site.signed_in("olga")
    for status in ("Done", "zzz", "<b>queued</b>", "queued;"):
        page = olga.get("/ui/owner/jobs", params={"status": status})
        assert page.status_code == 422, status
        assert "Status: no job is" in page.text and "queued, running, done, failed or cancelled" in page.text
        assert "<td>alice</td>" not in page.text and "<b>queued" not in page.text
        assert 'aria-invalid="true"' in page.text and "No jobs: fix the filter above" in page.text
    for status, shown in (("queued", 1), (" queued ", 1), ("done", 0), ("", 1)):
        page = olga.get("/ui/owner/jobs", params={"status": status})
        assert page.status_code == 200 and page.text.count("<td>alice</td>") == shown, status


def test_a_live_form_whose_session_ended_signs_in_back_to_its_page(site: Site) -> None:
    """The cost box, the statistics form or a cancel button posting after the session ended sent the
    browser to ``/ui/signin`` without ``next``: the sign-in led home and the page was lost (a part
    refreshing itself with ``GET`` came back to its page)."""
    page = "/ui/datasets/tiny?algorithm=alt-mcmc"
    browser = site.client()  # its session has ended: no cookie
    for address in ("/ui/datasets/tiny/cost", "/ui/datasets/tiny/statistics", "/ui/jobs/job_0a/cancel"):
        answer = browser.post(address, data={**JOB_FORM, "csrf": "x"},
                              headers={"HX-Request": "true", "HX-Current-URL": f"http://127.0.0.1{page}"})
        assert answer.status_code == 204 and answer.headers["HX-Redirect"] == "/ui/signin?next=" + quote(page, safe="")
    signin = browser.get(answer.headers["HX-Redirect"])
    signed = browser.post("/ui/signin", data={"csrf": _csrf(signin.text), "token": site.tokens["alice"],
                                              "next": page}, follow_redirects=False)
    assert signed.headers["location"] == page
    # a page off the site is never a place to go back to
    answer = site.client().post("/ui/datasets/tiny/cost", data={**JOB_FORM, "csrf": "x"},
                                headers={"HX-Request": "true", "HX-Current-URL": "https://evil.example//ui/x"})
    assert answer.headers["HX-Redirect"] == "/ui/signin"


def test_a_dataset_page_asked_for_an_algorithm_the_server_does_not_run_says_so(site: Site) -> None:
    """``/ui/datasets/tiny?algorithm=alt-mcmcm`` (a typo, an old link) showed the first algorithm's
    form without a word; a job run from it was another algorithm than the link named."""
    alice, _ = site.signed_in("alice")
    for asked in ("alt-mcmcm", "<b>x</b>", "ALT-EXPM"):
        page = alice.get("/ui/datasets/tiny", params={"algorithm": asked})
        assert page.status_code == 422, asked
        assert "unknown algorithm" in page.text and "this server runs: " in page.text and "<b>x" not in page.text
        assert 'role="alert"' in page.text and 'name="submission"' in page.text  # the form is still there
    for asked in ("", "alt-mcmc"):
        page = alice.get("/ui/datasets/tiny", params={"algorithm": asked})
        assert page.status_code == 200 and "unknown algorithm" not in page.text


def test_the_jobs_page_says_when_it_lists_only_the_newest_jobs(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """The jobs page listed the newest 200 jobs and said nothing of older ones; a job still queued
    behind them had no cancel button. (Shown here with 2 rows a page instead of 200.)"""
    from dprm.server.web import job_pages

    monkeypatch.setattr(job_pages, "JOBS_PAGE_ROWS", 2, raising=False)
    alice, token = site.signed_in("alice")
    made = [alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                       follow_redirects=False).headers["location"].rsplit("/", 1)[1] for _ in range(4)]
    assert alice.post(f"/ui/jobs/{made[1]}/cancel", data={"csrf": token}, follow_redirects=False).status_code == 303
    for page in (alice.get("/ui/jobs"), alice.get("/ui/jobs?partial=1", headers={"HX-Request": "true"})):
        shown = [job for job in made if f'href="/ui/jobs/{job}"' in page.text]
        assert shown == [made[0], made[2], made[3]]  # the newest two, and the oldest: still queued
        assert f'action="/ui/jobs/{made[0]}/cancel"' in page.text
        assert "Only your newest 2 jobs are shown" in page.text and "GET /v1/jobs" in page.text
    monkeypatch.setattr(job_pages, "JOBS_PAGE_ROWS", 4, raising=False)
    assert "Only your newest" not in alice.get("/ui/jobs").text


def test_the_owners_jobs_page_says_when_it_lists_only_the_newest_jobs(site: Site,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The owner's jobs page listed the newest 500 and said nothing of older ones (here 2 rows)."""
    from dprm.server.web import owner_pages

    monkeypatch.setattr(owner_pages, "OWNER_JOBS_ROWS", 2, raising=False)
    alice, token = site.signed_in("alice")
    for _ in range(3):
        alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"}, follow_redirects=False)
    olga, _ = site.signed_in("olga")
    page = olga.get("/ui/owner/jobs").text
    assert page.count("<td>alice</td>") == 2 and "Only the newest 2 jobs are shown" in page
    assert "Only the newest 2 jobs queued are shown" in olga.get("/ui/owner/jobs?status=queued").text
    assert "Only the newest" not in olga.get("/ui/owner/jobs?status=done").text


def test_registering_a_folder_says_it_is_a_folder_not_no_such_file(site: Site) -> None:
    """The owner's form typed with a folder (``/srv/data/mammals`` instead of its ``left.csv``) said
    "no such file", though it exists."""
    olga, token = site.signed_in("olga")
    folder = site.folder / "views"
    folder.mkdir()
    (folder / "left.csv").write_text("a\n1\n")
    answer = olga.post("/ui/owner/datasets", data={"csrf": token, "name": "fresh", "left": str(folder),
                                                   "right": str(folder / "left.csv"), "types": str(folder)})
    assert answer.status_code == 422
    assert f"{folder.resolve()}: is a directory; give the path of a file in it" in answer.text
    assert "no such file" not in answer.text
    missing = olga.post("/ui/owner/datasets", data={"csrf": token, "name": "fresh", "left": str(folder / "nope.csv"),
                                                    "right": str(folder), "types": str(folder)})
    assert "nope.csv: no such file" in missing.text


def test_a_bad_on_off_query_parameter_is_refused_in_the_pages_words(site: Site) -> None:
    """``/ui/jobs?partial=zz`` was refused with pydantic's wording ("query.partial: Input should be
    a valid integer, unable to parse string as an integer"); ``?again=x`` on a job's page too."""
    import html

    alice, token = site.signed_in("alice")
    job = alice.post("/ui/datasets/tiny/jobs", data={**JOB_FORM, "csrf": token, "action": "run"},
                     follow_redirects=False).headers["location"]
    for address, name, value in (("/ui/jobs?partial=zz", "partial", "zz"), ("/ui/jobs?partial=2", "partial", "2"),
                                 (f"{job}?again=x", "again", "x"), (f"{job}?partial=1.5", "partial", "1.5")):
        for headers in ({}, {"HX-Request": "true"}):
            answer = alice.get(address, headers=headers)
            page = html.unescape(answer.text)
            assert answer.status_code == 422 and "invalid_request" in page, (address, page[:300])
            assert f"{name} must be 0 or 1, not '{value}'" in page, (address, page[:1500])
            assert "Input should be" not in page and "query." not in page
    assert alice.get("/ui/jobs?partial=1").text.startswith('<div id="jobs"')
    assert "<html" in alice.get("/ui/jobs?partial=0").text
    assert "sent again" in alice.get(f"{job}?again=1").text and "sent again" not in alice.get(job).text
