"""Fire & Ice Solitaire, version 0: a single-agent Gymnasium env (see :mod:`polarzoo.envs.fire_and_ice.solitaire_env`)."""

from polarzoo.envs.fire_and_ice.solitaire_env import FireAndIceSolitaireEnv, __doc__  # type: ignore[no-redef]  # noqa: F401

GYMNASIUM_ID = "polarzoo/FireAndIceSolitaire-v0"


def env(**kwargs) -> FireAndIceSolitaireEnv:  # noqa: ANN003
    """A new solitaire env (same as ``gymnasium.make(GYMNASIUM_ID, **kwargs).unwrapped``)."""
    return FireAndIceSolitaireEnv(**kwargs)
