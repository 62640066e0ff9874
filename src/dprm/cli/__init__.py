"""The ``dprm`` command line: small command modules that parse options and call the library.

One module per command (group): :mod:`~dprm.cli.mine`, :mod:`~dprm.cli.inspect`,
:mod:`~dprm.cli.datasets`, :mod:`~dprm.cli.evaluate`, :mod:`~dprm.cli.report`. The root
(:mod:`~dprm.cli.app`) imports a command's module only when that command runs, so
``dprm --help`` and ``dprm --version`` answer without importing numpy or the miners.
What every command shares lives in one place each: printing and the one-line errors
(:mod:`~dprm.cli.console`), the options that load two views (:mod:`~dprm.cli.views`)
and the check-then-write of output files (:mod:`~dprm.cli.outputs`).

The contract: every user error ends as exactly one line ``error: <message>`` on
stderr with exit code 2, no traceback, no output file created and no budget spent.
"""

from dprm.cli.app import app, main

__all__ = ["app", "main"]
