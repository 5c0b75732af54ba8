"""What a trained agent is made of: the board-aware torch networks (:mod:`.networks`), the
MaskablePPO policy that wraps them (:mod:`.sb3`) and the AlphaZero-on-JAX network and search
(:mod:`.alphazero_jax`).  Imports only the envs' rules layer and the optional extras.

``polarzoo.baselines.policies.BoardPolicy`` (and the other names below) are the names saved
models were pickled with; they are looked up on first use, so importing this package needs
neither torch nor stable-baselines3.
"""

from __future__ import annotations

from typing import Any

_SB3_NAMES = ("BoardPolicy", "FastMaskableCategoricalDistribution", "MaskedCategorical")
_NETWORK_NAMES = ("BOARDS", "FireAndIceNet", "FloeNet", "ThinIceNet", "board_for_env", "build_network")


def __getattr__(name: str) -> Any:
    # Function-level imports: both modules need the train extra (torch, sb3-contrib).
    if name in _SB3_NAMES:
        from polarzoo.baselines.policies import sb3

        return getattr(sb3, name)
    if name in _NETWORK_NAMES:
        from polarzoo.baselines.policies import networks

        return getattr(networks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*_SB3_NAMES, *_NETWORK_NAMES]
