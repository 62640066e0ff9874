"""Odd inputs found by an outside user, each answered by one line that names the real problem.

A loop of symbolic links, a named pipe, a file of only white space, a huge value in
an error line, a bad ε of ``dprm remote`` (named before any connection), numbers
written in other scripts or with separators, a very wide table in ``dprm inspect``,
and a miner given something that is not data.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from dprm.errors import ParameterError
from dprm.privacy.budget import as_epsilon, as_fraction
from test_cli import assert_one_error_line, run, write


def expect_error(args: list, *fragments: str) -> str:
    code, out, err = run(args)
    assert code == 2, (code, out, err)
    return assert_one_error_line(err, *fragments)


def test_a_loop_of_symbolic_links_is_named(tmp_path: Path) -> None:
    (tmp_path / "a.csv").symlink_to(tmp_path / "b.csv")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    other = write(tmp_path / "r.csv", "x\n1\n2\n")
    expect_error(["mine", tmp_path / "a.csv", other], "a.csv", "loop of symbolic links")
    expect_error(["mine", other, other, "-o", tmp_path / "a.csv"], "a.csv", "loop of symbolic links")


def test_a_named_pipe_is_not_taken_for_an_empty_file(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    other = write(tmp_path / "r.csv", "x\n1\n2\n")
    line = expect_error(["mine", pipe, other], "pipe.csv", "not a regular file")
    assert "empty" not in line
    expect_error(["itemsets", pipe, "--min-support", "0.5"], "pipe.csv", "not a regular file")


def test_a_file_of_white_space_says_its_header_is_blank(tmp_path: Path) -> None:
    blank = write(tmp_path / "blank.csv", "   \n  \n")
    other = write(tmp_path / "r.csv", "x\n1\n2\n")
    expect_error(["mine", blank, other], "blank.csv", "header line is blank")


def test_a_huge_value_is_written_short_in_the_error(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "a,b\n1e308,2\n3,4\n")
    right = write(tmp_path / "r.csv", "c,d\n1,2\n3,4\n")
    types = write(tmp_path / "t.json", '{"columns": {"a": {"type": "numeric", "bounds": [0, 10]}}}')
    line = expect_error(["mine", left, right, "--types", types, "-a", "alt-mcmc"], "'a'", "1e+308", "[0, 10]")
    assert len(line) < 200


@pytest.mark.parametrize("epsilon, fragment", [("-1", "> 0"), ("١", "finite number"), ("abc", "finite number"),
                                               ("0.1234567891", "multiple of 1e-9")])
def test_remote_names_a_bad_epsilon_before_connecting(tmp_path: Path, epsilon: str, fragment: str) -> None:
    token = write(tmp_path / "token", "dprm_1_secret\n")
    # port 9 on loopback: nothing answers, so a connection attempt would say "cannot reach"
    line = expect_error(["remote", "--url", "http://127.0.0.1:9", "--token-file", token, "submit", "ds",
                         "-a", "alt-mcmc", f"--epsilon={epsilon}"], "--epsilon", fragment)
    assert "reach" not in line


@pytest.mark.parametrize("text", ["١", "1_000", " 1", "1 ", "0x10", "1e", "½"])
def test_number_texts_are_plain_ascii_decimals(text: str) -> None:
    with pytest.raises(ParameterError, match="finite number"):
        as_fraction(text)
    with pytest.raises(ParameterError):
        as_epsilon(text)


def test_number_texts_still_read_as_written() -> None:
    assert [as_fraction(t) for t in ("0.1", "1/3", "1e-3", ".5", "+2")] == [
        as_fraction(0.1), as_fraction(1) / 3, as_fraction("0.001"), as_fraction(0.5), 2]


def test_inspect_lists_at_most_limit_attributes_per_view(tmp_path: Path) -> None:
    header = ",".join(f"c{i}" for i in range(300))
    rows = "\n".join(",".join(str((i * r) % 7) for i in range(300)) for r in range(1, 5))
    left = write(tmp_path / "l.csv", header + "\n" + rows + "\n")
    right = write(tmp_path / "r.csv", header.replace("c", "d") + "\n" + rows + "\n")
    code, out, err = run(["inspect", left, right, "--limit", "5"])
    assert code == 0, err
    assert "more attributes of the left view not listed" in out
    assert out.count("│ left ") == 5 and out.count("│ right ") == 5
    code, out, err = run(["inspect", left, right, "--limit", "-1"])
    assert code == 2 and "--limit" in err


@pytest.mark.parametrize("data", ["left.csv", None, pd.DataFrame({"a": [1, 2]})])
def test_a_miner_given_something_else_than_data_says_what_it_needs(data: object) -> None:
    from dprm.mining import CartWheels

    with pytest.raises(ParameterError, match="TwoViewData"):
        CartWheels().fit(data)


@pytest.mark.parametrize("content, fragment", [
    ("tok\u00e9n\n".encode(), "printable ASCII"),      # not ASCII
    (b"\xff\xfe\xfd\n", "printable ASCII"),             # not even UTF-8
    (b"abc\x00def\n", "printable ASCII"),               # a NUL inside the one word
    (b"a" * 5000, "too large"),                          # read up to a bound, never whole
])
def test_remote_names_a_token_file_that_holds_no_token_before_connecting(tmp_path: Path, content: bytes,
                                                                         fragment: str) -> None:
    """A token file is checked before any request: one line naming it, exit 2, no internal error or
    'cannot reach' (port 9 on loopback answers nothing)."""
    token = tmp_path / "t.token"
    token.write_bytes(content)
    line = expect_error(["remote", "--url", "http://127.0.0.1:9", "--token-file", token, "budget"],
                        "--token-file", "t.token", fragment)
    assert "reach" not in line and "internal" not in line


def test_remote_refuses_a_url_with_a_user_name_and_password(tmp_path: Path) -> None:
    """httpx would send ``user:pw@`` as Basic authentication in place of the token."""
    token = write(tmp_path / "token", "dprm_1_secret\n")
    line = expect_error(["remote", "--url", "http://user:pw@127.0.0.1:9", "--token-file", token, "budget"],
                        "--url", "user name or password")
    assert "reach" not in line


@pytest.mark.parametrize("url, shown", [
    ("http://user:s3cret@127.0.0.1:9", "'http://user:***@127.0.0.1:9'"),
    ("https://s3cret@127.0.0.1:9/v1", "'https://***@127.0.0.1:9/v1'"),         # a token as the user name
    ("http://user:s3cret@127.0.0.1:port", "'http://user:***@127.0.0.1:port'"),  # no URL at all: still masked
    ("ftp://user:s3cret@127.0.0.1", "'ftp://user:***@127.0.0.1'"),
], ids=["password", "user-alone", "bad-port", "not-http"])
def test_remote_never_echoes_the_credentials_of_a_url(tmp_path: Path, url: str, shown: str) -> None:
    """The refusal of ``user:pw@`` repeated the password on the terminal (and in shell logs)."""
    token = write(tmp_path / "token", "dprm_1_secret\n")
    line = expect_error(["remote", "--url", url, "--token-file", token, "budget"], "--url", shown)
    assert "s3cret" not in line


@pytest.mark.parametrize("rng", ["abc", -1, True, 1.5, [1, 2]])
def test_a_miner_names_an_rng_that_is_not_a_generator(rng: object) -> None:
    """Refused before anything is read or spent, naming rng (numpy's own error said 'SeedSequence expects int').

    A ``numpy.random.RandomState`` is accepted (tests/test_private_miners.py)."""
    from dprm.mining import CartWheels, make_miner

    for miner in (CartWheels(depth=2), make_miner("alt-expm", epsilon=1), make_miner("serenade-cs", epsilon=1)):
        with pytest.raises(ParameterError, match="rng must be a numpy.random.Generator"):
            miner.fit(_tiny_data(), rng=rng)


def _tiny_data():
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(200, n_left_boolean=6, n_left_numeric=0, n_right_numeric=4, random_state=0)
    return load_two_view(planted.left, planted.right, types=planted.types)


def test_a_types_file_that_is_a_named_pipe_is_refused_unread(tmp_path: Path) -> None:
    """It hung dprm, waiting for a writer; now named like a data file that is a pipe."""
    import threading

    pipe = tmp_path / "types.json"
    os.mkfifo(pipe)
    left = write(tmp_path / "l.csv", "x\n1\n2\n")
    right = write(tmp_path / "r.csv", "y\n1\n0\n")

    def feed() -> None:  # without the check, dprm reads "{}" and goes on (rather than hanging the test)
        try:
            fd = os.open(pipe, os.O_WRONLY)
            os.write(fd, b"{}")
            os.close(fd)
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        expect_error(["inspect", left, right, "--types", pipe], "types.json", "named pipe", "not a regular file")
    finally:
        os.close(os.open(pipe, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer's open return
        writer.join(5)


def test_a_types_file_linked_to_a_device_or_too_big_is_refused(tmp_path: Path, monkeypatch) -> None:
    import dprm.data.types_file as types_file

    left = write(tmp_path / "l.csv", "x\n1\n2\n")
    right = write(tmp_path / "r.csv", "y\n1\n0\n")
    (tmp_path / "dev.json").symlink_to("/dev/null")  # /dev/zero was read until memory ran out
    expect_error(["inspect", left, right, "--types", tmp_path / "dev.json"], "dev.json", "device",
                 "not a regular file")
    big = write(tmp_path / "big.json", "{}" + " " * 2000)
    monkeypatch.setattr(types_file, "MAX_TYPES_FILE_BYTES", 1000)
    expect_error(["inspect", left, right, "--types", big], "big.json", "2002 bytes", "at most 1000 bytes")


def test_report_names_a_run_that_is_a_named_pipe(tmp_path: Path) -> None:
    pipe = tmp_path / "run.json"
    os.mkfifo(pipe)
    line = expect_error(["report", "--run", pipe, "-o", tmp_path / "r.html"], "run.json", "named pipe")
    assert "no such file" not in line
    assert not (tmp_path / "r.html").exists()


def test_report_refuses_a_query_nested_too_deeply_in_one_line(tmp_path: Path) -> None:
    """400 nested ``not`` in one query of a valid document: an internal error (RecursionError while hashing
    its normal form) before; now one line naming the query, and nothing written."""
    import json

    left = write(tmp_path / "l.csv", "a,x\n" + "".join(f"{i % 2},{i}\n" for i in range(40)))
    right = write(tmp_path / "r.csv", "b,y\n" + "".join(f"{i % 2},{i % 7}\n" for i in range(40)))
    code, out, err = run(["mine", left, right, "-a", "cartwheels", "-o", tmp_path / "run.json"])
    assert code == 0, err
    document = json.loads((tmp_path / "run.json").read_text())
    for levels, fine in ((60, True), (400, False)):
        query = document["redescriptions"][0]["left"]
        for _ in range(levels):
            query = {"not": query}
        edited = json.loads(json.dumps(document))
        edited["redescriptions"][0]["left"] = query
        (tmp_path / f"deep{levels}.json").write_text(json.dumps(edited))
        html = tmp_path / f"deep{levels}.html"
        if fine:
            code, out, err = run(["report", "--run", tmp_path / f"deep{levels}.json", "-o", html])
            assert code == 0 and html.exists(), err
        else:
            expect_error(["report", "--run", tmp_path / f"deep{levels}.json", "-o", html], "deep400.json",
                         "redescriptions[0].left", "nested too deeply")
            assert not html.exists()


BIG = "9" * 5000  # more digits than Python converts to int (4300)


@pytest.mark.parametrize("args, fragments", [
    (["--epsilon", "1_0"], ["--epsilon", "'1_0'", "'_' separators"]),  # was read as 10: ten times the budget
    (["--epsilon", "\uff15"], ["--epsilon", "ASCII digits"]),              # full-width 5
    (["--seed", "1_0"], ["--seed", "'_' separators"]),
    (["--seed", BIG], ["--seed", "5000 digits"]),                         # internal errors before
    (["--top", BIG], ["--top", "5000 digits"]),
    (["--max-clauses", BIG], ["--max-clauses", "5000 digits"]),
    (["--seed", "9" * 400], ["--seed", "400 digits"]),                    # echoed all 400 digits before
    (["--top", "9" * 400], ["--top", "400 digits"]),
    (["--depth", "1_0"], ["--depth", "'1_0'"]),
], ids=["eps-underscore", "eps-fullwidth", "seed-underscore", "seed-5000", "top-5000", "clauses-5000", "seed-400",
        "top-400", "depth-underscore"])
def test_mine_refuses_numbers_a_user_would_not_mean(tmp_path: Path, args: list, fragments: list) -> None:
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{i % 2}\n" for i in range(20)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{(i // 2) % 2}\n" for i in range(20)))
    out = tmp_path / "o.json"
    line = expect_error(["mine", left, right, "-a", "alt-mcmc", "-o", out, *args], *fragments)
    assert len(line) < 200 and not out.exists()


@pytest.mark.parametrize("command, fragments", [
    (["inspect", "{l}", "{r}", "--max-splits", BIG], ["--max-splits", "5000 digits"]),
    (["evaluate", "{l}", "{r}", "--algorithms", "cartwheels", "--budgets", "1x1", "--out", "{t}/ev", "--seed", BIG],
     ["--seed", "5000 digits"]),
    (["evaluate", "{l}", "{r}", "--algorithms", "cartwheels", "--budgets", "1x1", "--out", "{t}/ev",
      "-p", "depth=" + BIG], ["depth must be an integer", "..."]),
    (["evaluate", "{l}", "{r}", "--algorithms", "cartwheels", "--budgets", "1x1", "--out", "{t}/ev",
      "-p", '{"depth": %s}' % BIG], ["--parameters", "more than 4300 digits"]),
    (["evaluate", "{l}", "{r}", "--algorithms", "cartwheels", "--budgets", "1x1", "--out", "{t}/ev",
      "-p", "min_support=" + "9" * 400], ["min-support must be a finite number", "..."]),
    (["evaluate", "{l}", "{r}", "--algorithms", "cartwheels", "--budgets", "1x1", "--out", "{t}/ev",
      "-p", "depth=" + "9" * 400], ["depth must be at most", "..."]),
], ids=["inspect-max-splits", "evaluate-seed", "p-depth-5000", "p-json-5000", "p-min-support-400", "p-depth-400"])
def test_huge_integers_in_options_are_one_short_line(tmp_path: Path, command: list, fragments: list) -> None:
    """Each was an internal error (exit 1: OverflowError, Python's 4300-digit limit) or echoed every digit."""
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{i % 2}\n" for i in range(20)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{(i // 2) % 2}\n" for i in range(20)))
    args = [a.replace("{l}", str(left)).replace("{r}", str(right)).replace("{t}", str(tmp_path)) for a in command]
    line = expect_error(args, *fragments)
    assert len(line) < 300 and not (tmp_path / "ev").exists()


def test_plain_numbers_in_options_still_read(tmp_path: Path) -> None:
    left = write(tmp_path / "l.csv", "id,a\n" + "".join(f"{i},{i % 2}\n" for i in range(20)))
    right = write(tmp_path / "r.csv", "id,b\n" + "".join(f"{i},{(i // 2) % 2}\n" for i in range(20)))
    code, out, err = run(["inspect", left, right, "--max-splits", "016"])
    assert code == 0, err


def test_ctrl_c_during_a_run_ends_in_the_one_line_interrupted_and_writes_nothing(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """typer turns a KeyboardInterrupt in a command into exit code 130 without a word: the line was missing."""
    import dprm.mining.serenade as serenade

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(serenade.SerenadeES, "fit", interrupted)
    left = write(tmp_path / "l.csv", "a,b\n1,0\n0,1\n1,1\n")
    right = write(tmp_path / "r.csv", "c,d\n1,0\n0,1\n0,0\n")
    code, out, err = run(["mine", left, right, "-a", "serenade-es", "--epsilon", "1", "-o", tmp_path / "out.json"])
    assert (code, err, out) == (130, "interrupted\n", "")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(("option", "says"), [("-a", "unknown algorithm"), ("--out-of-bounds", "--out-of-bounds"),
                                             ("--duplicate-columns", "--duplicate-columns")])
def test_a_long_option_value_is_quoted_short(tmp_path: Path, option: str, says: str) -> None:
    """A 5,000-character value was echoed whole in the error line."""
    left = write(tmp_path / "l.csv", "x\n1\n2\n")
    right = write(tmp_path / "r.csv", "y\n1\n0\n")
    line = expect_error(["mine", left, right, option, "q" * 5000], says, "qqq...")
    assert len(line) < 300, line


def test_a_types_file_that_is_a_directory_or_a_device_is_named_so(tmp_path: Path) -> None:
    """Its extension was judged first: '--types .' and '--types /dev/null' were "unknown types file extension ''"."""
    left = write(tmp_path / "l.csv", "x\n1\n2\n")
    right = write(tmp_path / "r.csv", "y\n1\n0\n")
    line = expect_error(["inspect", left, right, "--types", tmp_path], "is a directory, not a types file")
    assert "extension" not in line
    line = expect_error(["inspect", left, right, "--types", "/dev/null"], "/dev/null: is a device",
                        "not a regular file")
    assert "extension" not in line
    expect_error(["inspect", left, right, "--types", left], "unknown types file extension '.csv'")


def test_a_private_run_says_a_declared_column_is_in_neither_file_first(tmp_path: Path) -> None:
    """A private dprm mine said "column 'zzz': a private run needs its public 'bounds'" of a column in neither
    file, where dprm inspect says it is in neither; dprm classify the same of a column not in its file."""
    left = write(tmp_path / "l.csv", "id,a,b\n1,0,2.5\n2,1,3.5\n3,0,1.5\n")
    right = write(tmp_path / "r.csv", "id,y\n1,0\n2,1\n3,1\n")
    types = write(tmp_path / "t.json", '{"columns": {"zzz": "numeric", "b": {"bounds": [0, 5]}}}')
    output = tmp_path / "out.json"
    expect_error(["mine", left, right, "--types", types, "--epsilon", "1", "-o", output],
                 f"{types}: declares column(s) that are in neither {left} nor {right}: 'zzz'")
    assert not output.exists()
    expect_error(["inspect", left, right, "--types", types], "in neither", "'zzz'")
    expect_error(["classify", left, "--target", "a", "--types", types, "--epsilon", "1"],
                 f"{types}: declares column(s) that are not in {left}: 'zzz'")
    # a column of the files declared without its domain is refused for that, as before
    types = write(tmp_path / "t.json", '{"columns": {"b": "numeric"}}')
    expect_error(["mine", left, right, "--types", types, "--epsilon", "1"], "column 'b': a private run needs its "
                 "public 'bounds'")


class _Killed(BaseException):
    """What SIGTERM raised in the test before the command installed its own handler."""


@pytest.mark.parametrize("command", ["classify", "itemsets"])
def test_sigterm_ends_classify_and_itemsets_as_ctrl_c_does(tmp_path: Path, monkeypatch, command: str) -> None:
    """SIGTERM killed ``dprm classify`` and ``dprm itemsets`` at once (exit -15, no word), unlike ``mine``."""
    import signal

    import dprm.cli.classify as classify_module
    import dprm.cli.itemsets as itemsets_module

    module, name = (classify_module, "_load") if command == "classify" else (itemsets_module, "read_columns")
    reading = getattr(module, name)

    def terminated(*args, **kwargs):
        result = reading(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return result

    def killed(signum, frame):
        raise _Killed

    monkeypatch.setattr(module, name, terminated)
    before = signal.signal(signal.SIGTERM, killed)  # the test's stand-in for the default (kill the process)
    try:
        learn = write(tmp_path / "learn.csv", "a,b,y\n" + "".join(f"{i % 3},{i % 2},{'p' if i % 3 else 'q'}\n"
                                                               for i in range(30)))
        args = {"classify": ["classify", learn, "--target", "y", "--epsilon", "1", "--cv", "0"],
                "itemsets": ["itemsets", learn, "--min-support", "0.3", "--categorical-integers"]}[command]
        code, out, err = run(args + ["-o", tmp_path / "out.json"])
    finally:
        signal.signal(signal.SIGTERM, before)
    assert (code, err, out) == (130, "interrupted\n", "")
    assert not (tmp_path / "out.json").exists()


def test_inspect_shows_column_names_that_look_like_markup_as_written(tmp_path: Path) -> None:
    """A column named '[br]' or '[red]x' was read as rich markup: the table showed '' and 'x'."""
    left = write(tmp_path / "l.csv", "id,[br],o\n" + "".join(f"{i},{i % 2},{i % 3 == 0:d}\n" for i in range(12)))
    right = write(tmp_path / "r.csv", "id,[red]x,p\n" + "".join(f"{i},{i % 2},{i % 4 == 0:d}\n" for i in range(12)))
    code, out, err = run(["inspect", left, right])
    assert code == 0, err
    assert "│ [br] " in out and "│ [red]x " in out
