"""The command lines of README.md and docs/*.md name options that exist, every option is named in the docs,
and README's quick start runs as written (placeholders filled in with ``dprm datasets make-planted``'s files).

docs/mining-sessions.md is a log of past measurements and is left out; its benchmark commands are not ``dprm``
commands.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
import typer

from dprm.cli import app, main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LOGS = {"mining-sessions.md"}
DOCS = [README] + [path for path in sorted((ROOT / "docs").glob("*.md")) if path.name not in LOGS]

#: Options of a command group that come before its subcommand, each with a value.
GROUP_OPTIONS_WITH_VALUES = {"--db", "--url", "--token-file", "--request-timeout"}


def cli_option_names() -> dict[str, list[tuple[str, ...]]]:
    """Every command path (``"mine"``, ``"admin dataset add"``) -> the names of each option it takes (a flag's
    ``--x`` and ``--no-x`` together), its groups' options included."""
    root = typer.main.get_command(app)
    commands: dict[str, list[tuple[str, ...]]] = {}

    def walk(command, path: list[str], inherited: list[tuple[str, ...]]) -> None:
        options = list(inherited)
        for parameter in command.params:
            if type(parameter).__name__.endswith("Option"):
                options.append(tuple(parameter.opts + parameter.secondary_opts))
        if hasattr(command, "list_commands"):
            context = typer.Context(command)
            for name in command.list_commands(context):
                walk(command.get_command(context, name), path + [name], options)
        else:
            commands[" ".join(path)] = options

    walk(root, [], [])
    return commands


def cli_options() -> dict[str, set[str]]:
    """Every command path -> every name of an option it takes, ``--help`` included."""
    return {key: {name for names in options for name in names} | {"--help", "-h"}
            for key, options in cli_option_names().items()}


def shell_lines(text: str) -> list[str]:
    """The logical lines of the ```sh blocks: continuations joined, comments dropped."""
    lines = []
    for block in re.findall(r"^\s*```sh\n(.*?)^\s*```", text, flags=re.S | re.M):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                lines.append(line)
    return lines


def dprm_invocations(path: Path) -> list[str]:
    """The arguments of every ``dprm`` command a page shows: in its ```sh blocks and in its inline code."""
    text = path.read_text(encoding="utf-8")
    found = []
    for line in shell_lines(text):
        for match in re.finditer(r"(?:^|(?<=[\s;&(]))dprm (?=[a-z-])(.*)", line):
            found.append(re.split(r"\s(?:\||>|&&|;)\s?", match.group(1))[0])
    outside_blocks = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
    found += [match.group(1) for match in re.finditer(r"`dprm ([a-z-][^`]*)`", outside_blocks)]
    return found


def resolve(arguments: str, commands: dict[str, set[str]]) -> tuple[str | None, list[str]]:
    """The command an invocation names and the options it gives (``None`` for ``dprm --help`` and the like)."""
    words = arguments.split()
    path: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in GROUP_OPTIONS_WITH_VALUES and path:
            index += 2
            continue
        candidate = " ".join(path + [word])
        if any(key == candidate or key.startswith(candidate + " ") for key in commands):
            path.append(word)
            index += 1
            continue
        break
    key = " ".join(path)
    if key not in commands:
        return None, []
    options = [re.sub(r"=.*", "", token.strip("[]()`,;")) for token in words[index:]]
    return key, [option for option in options if re.fullmatch(r"--[a-z][a-z0-9-]*", option)]


def test_the_docs_show_many_commands() -> None:
    """The extraction below finds the pages' commands (a change of format would make the other tests vacuous)."""
    commands = cli_options()
    resolved = [resolve(arguments, commands)[0] for path in DOCS for arguments in dprm_invocations(path)]
    assert sum(key is not None for key in resolved) > 200
    assert {"mine", "inspect", "evaluate", "report", "datasets make-planted", "classify", "itemsets",
            "admin dataset add", "remote submit", "serve"} <= set(resolved)


def test_every_option_the_docs_give_a_command_is_one_of_its_options() -> None:
    commands = cli_options()
    wrong = []
    for path in DOCS:
        for arguments in dprm_invocations(path):
            key, options = resolve(arguments, commands)
            if key is not None:
                wrong += [f"{path.name}: dprm {key} {option}" for option in options if option not in commands[key]]
    assert wrong == [], "options the docs give that the command does not take:\n" + "\n".join(wrong)


def test_every_option_of_every_command_is_named_in_the_docs() -> None:
    """``dprm COMMAND -h`` lists nothing the docs never name (docs/cli.md lists the ones no other page explains)."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in DOCS)
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?![\w-])", text))
    missing = sorted(
        {f"dprm {key} {'/'.join(names)}" for key, options in cli_option_names().items() for names in options
         if not named & set(names)}
    )
    assert missing == [], "options no page names (document them in docs/cli.md):\n" + "\n".join(missing)


# ----------------------------------------------------------------------------- README's quick start


def readme_command(prefix: str) -> str:
    """The one command of README's "Command line" block that starts with ``prefix``."""
    section = README.read_text(encoding="utf-8").split("## Command line", 1)[1]
    matches = [line for line in shell_lines(section.split("\n## ", 1)[0]) if line.startswith(prefix)]
    assert len(matches) == 1, f"README's command line block has {len(matches)} commands starting {prefix!r}"
    return matches[0]


def as_run(command: str, keep: dict[str, str | None], placeholders: dict[str, str]) -> list[str]:
    """The arguments of a README command as run: ``[--option VALUE]`` kept (VALUE or ``keep``'s replacement)
    only for the options in ``keep``, ``...`` dropped, placeholders filled in."""
    given = set()

    def optional(match: re.Match[str]) -> str:
        option, _, value = match.group(1).partition(" ")
        if option not in keep:
            return ""
        given.add(option)
        return f"{option} {keep[option] if keep[option] is not None else value}"

    line = re.sub(r"\[([^\]]*)\]", optional, command).replace("...", "")
    assert given == set(keep), f"README's {command!r} no longer shows {sorted(set(keep) - given)}"
    words = shlex.split(line)
    assert words[0] == "dprm"
    return [placeholders.get(word, word) for word in words[1:]]


def run(arguments: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(arguments)
        except SystemExit as done:
            code = 0 if done.code is None else done.code
    return code, out.getvalue(), err.getvalue()


def test_readme_quick_start_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """make-planted, inspect, the default private miner, cartwheels with its outputs, and a report of its run."""
    monkeypatch.chdir(tmp_path)
    make = shlex.split(readme_command("dprm datasets make-planted"))[1:]
    code, _, err = run(make)
    assert code == 0, err
    example = tmp_path / make[2]
    placeholders = {"LEFT.csv": str(example / "left.csv"), "RIGHT.csv": str(example / "right.csv"),
                    "types.json": str(example / "types.json")}

    code, out, err = run(as_run(readme_command("dprm inspect"), {"--types": None}, placeholders))
    assert code == 0, err
    assert "2,000 rows" in out

    code, out, err = run(as_run(readme_command("dprm mine LEFT.csv RIGHT.csv --epsilon 1"), {}, placeholders))
    assert code == 0, err
    # README: "The first line `dprm mine` prints says what the run is worth"
    assert out.splitlines()[0].startswith("private: ε = 1 spent (pure-dp on MCMC convergence), ledger "), out
    assert "differentially private statistics" in out.splitlines()[1]

    cartwheels = readme_command("dprm mine LEFT.csv RIGHT.csv --algorithm cartwheels")
    keep = {"--seed": "0", "--output": None, "--clired": None, "--types": None, "--depth": None,
            "--init-trials": None}
    code, out, err = run(as_run(cartwheels, keep, placeholders))
    assert code == 0, err
    assert out.startswith("NOT private: cartwheels is not a private algorithm")
    assert (tmp_path / "out.json").is_file() and (tmp_path / "out.queries").is_file()

    code, out, err = run(as_run(readme_command("dprm report --run"), {}, placeholders))
    assert code == 0, err
    assert (tmp_path / "run.html").is_file()
