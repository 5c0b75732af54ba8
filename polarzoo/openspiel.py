"""Deprecated: the OpenSpiel games are in :mod:`polarzoo.wrappers.openspiel` (importing this
module still registers them, with a ``DeprecationWarning``, until 0.4)."""

import warnings

from polarzoo.wrappers.openspiel import *  # noqa: F403  (registers the games with pyspiel)
from polarzoo.wrappers.openspiel import __all__  # noqa: F401

warnings.warn(
    "polarzoo.openspiel moved to polarzoo.wrappers.openspiel; the old name goes in polarzoo 0.4", DeprecationWarning, stacklevel=2
)
