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

from polarzoo.envs import ENVIRONMENTS, GYMNASIUM_ENVIRONMENTS  # noqa: E402  (registers the ids)

__all__ = ["ENVIRONMENTS", "GYMNASIUM_ENVIRONMENTS", "__version__"]
