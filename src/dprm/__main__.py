"""``python -m dprm``: the same as the ``dprm`` command."""

from dprm.cli.app import main

main()
