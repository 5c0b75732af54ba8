"""polarzoo: reference RL environments for three "ice" board games.

The repository keeps the layout ``envs/``, ``wrappers/``, ``baselines/`` at its top level; the
package installs them as ``polarzoo.envs``, ``polarzoo.wrappers`` and ``polarzoo.baselines`` (a
setuptools ``package-dir`` mapping in ``pyproject.toml``), so nothing named ``envs`` or
``baselines`` lands in site-packages beside users' own code.

>>> import polarzoo
>>> sorted(polarzoo.ENVIRONMENTS)
['fire_and_ice_v0', 'go_with_the_floe_v0', 'thin_ice_v0']

Importing ``polarzoo`` (or ``polarzoo.envs``) registers the single-agent Gymnasium ids under the
``polarzoo/`` namespace, e.g. ``gymnasium.make("polarzoo/FireAndIceSolitaire-v0")``.
"""

from __future__ import annotations

__version__ = "0.3.0"


def _quiet_ctrl_c_at_start_up() -> None:
    """In polarzoo's own command lines (``python -m polarzoo...``, ``polarzoo-*``), a Ctrl-C
    before a command's handler is in place (numpy, numba, torch still importing) is one line and
    exit 130, as later; a library import changes nothing."""
    import os
    import sys

    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    if not (program == "-m" or program.startswith("polarzoo-")):
        return
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, traceback: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.stderr.write("\ninterrupted\n")
            sys.stderr.flush()
            os._exit(130)
        previous(kind, value, traceback)  # type: ignore[arg-type]

    sys.excepthook = hook


_quiet_ctrl_c_at_start_up()

from polarzoo.envs import ENVIRONMENTS, GYMNASIUM_ENVIRONMENTS  # noqa: E402  (registers the ids)

__all__ = ["ENVIRONMENTS", "GYMNASIUM_ENVIRONMENTS", "__version__"]
