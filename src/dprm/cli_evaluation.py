"""``dprm evaluate``: the experiment runner's command (registered on :data:`dprm.cli.app`)."""

from __future__ import annotations

from dprm.cli import app, console, user_errors  # noqa: F401  (commands are added below)
