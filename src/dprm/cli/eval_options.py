"""What the evaluation commands (``dprm itemsets-eval``, ``dprm classify-eval``) share.

Each writes tables, figures and a report into an output directory, takes its grid as
comma-separated lists and its datasets by name: :data:`OutDir` (the argument),
:func:`number_list`, :func:`dataset_names` and :class:`ResultFolder` (checked before
any data is read; written all or none at the end, a new folder made only then).

Examples
--------
>>> number_list("0.1, 0.3", "--thetas", float)
[0.1, 0.3]
>>> number_list("1-3,5", "--depths", int, ranges=True)
[1, 2, 3, 5]
>>> dataset_names(None, "vote,mushroom")
['vote', 'mushroom']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from dprm.cli.coercion import read_number
from dprm.cli.outputs import _check_name_length, check_directory, check_writable
from dprm.errors import DprmError, ParameterError, short_repr

__all__ = ["OutDir", "number_list", "dataset_names", "ResultFolder"]

#: Most integers one range ``A-B`` may name.
MAX_RANGE = 1000

OutDir = Annotated[Path, typer.Argument(metavar="OUT_DIR", show_default=False,
                                        help="Directory for the tables, figures and report (created if needed).")]


def number_list(text: str, option: str, kind: type, *, ranges: bool = False) -> list[Any]:
    """A comma-separated list of numbers of type ``kind``; with ``ranges``, integers also as ``A-B``.

    An entry that is not a number (or a range of at most :data:`MAX_RANGE` + 1 integers),
    or no entry at all, is a one-line :class:`~dprm.errors.ParameterError` naming ``option``.
    """
    values: list[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            if ranges and kind is int and "-" in part[1:]:
                low, high = (read_number(x, int) for x in part.split("-", 1))
                if high < low or high - low > MAX_RANGE:
                    raise ValueError
                values.extend(range(low, high + 1))
            else:
                values.append(read_number(part, kind))
        except ValueError:
            wanted = "whole number or range A-B" if ranges and kind is int else "number"
            raise ParameterError(f"{option}: {short_repr(part)} is not a {wanted}") from None
    if not values:
        raise ParameterError(f"{option}: no value given")
    return values


def dataset_names(datasets: str | None, default: str) -> list[str]:
    """The names of ``--datasets`` (``default`` when not given); an empty or repeated name is an error."""
    names = [d.strip() for d in (datasets or default).split(",")]
    if any(not d for d in names) or len(set(names)) != len(names):
        raise ParameterError(f"--datasets: empty or repeated name in {datasets!r}")
    return names


class ResultFolder:
    """The output folder of an evaluation command: checked before any work, written all or none at the end.

    An existing folder must be empty or hold an earlier result of ``command`` (its file
    ``marker``), whose files a new run replaces: a folder of other files is refused, as
    ``dprm evaluate`` refuses one, so that nothing unrelated is overwritten. A new
    folder is not made before :meth:`commit`: a run that fails, is interrupted or is
    killed while it computes leaves none (nor the folders above it).
    :meth:`commit` writes the files with :func:`dprm.file_sets.write_folder`: a new
    folder appears whole by a rename (it is written beside its place first); an earlier
    result's folder is left as it was on a failure, and holds only the new result
    after a success (``earlier``: the names of the command's files).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = ResultFolder(Path(tmp) / "out", "table.json", "dprm demo")
    ...     folder.check(["table.json", "report.html"])
    ...     before = (Path(tmp) / "out").exists()
    ...     written = folder.commit({"table.json": b"{}", "report.html": b"<p>"})
    ...     before, [p.name for p in written], sorted(p.name for p in (Path(tmp) / "out").iterdir())
    (False, ['table.json', 'report.html'], ['report.html', 'table.json'])
    """

    def __init__(self, out_dir: Path, marker: str, command: str,
                 earlier: Callable[[str], bool] | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.marker = marker
        self.command = command
        self.earlier = earlier

    def check(self, names: Iterable[str]) -> None:
        """Refuse, before any data is read, a folder that could not take the files ``names``.

        Raises
        ------
        DprmError
            A path that is not a folder (a file, a broken link), a folder that cannot be
            written or made, a folder of other files, a name too long or taken by a folder.
        """
        out_dir = self.out_dir
        if os.path.lexists(out_dir) and not out_dir.exists():
            raise ParameterError(f"{out_dir}: is a broken symbolic link; give a folder")
        check_directory(out_dir, create=True)
        if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / self.marker).is_file():
            raise ParameterError(f"{out_dir}: not empty and holds no earlier {self.command} result "
                                 f"({self.marker}); choose another OUT_DIR")
        for name in names:
            target = out_dir / name
            if out_dir.is_dir():
                check_writable(target)
            else:
                _check_name_length(target, target)

    def commit(self, contents: Mapping[str, bytes]) -> list[Path]:
        """Write every file ``name: bytes`` of ``contents``, all or none; their paths.

        Raises
        ------
        DprmError
            One line naming the file (or the folder) that could not be written; nothing
            new is left, an earlier result stays as it was.
        """
        from dprm.file_sets import write_folder

        try:
            return write_folder(self.out_dir, contents, earlier=self.earlier)
        except OSError as error:
            where = error.filename if error.filename is not None else self.out_dir
            raise DprmError(f"{os.fsdecode(where)}: cannot be written ({error.strerror or error})") from None
