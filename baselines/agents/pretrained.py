"""The models shipped in the package (``baselines/pretrained/``, package data), as each game's kit
names them (``Kit.pretrained``, ``Kit.pretrained_az_jax``)."""

from __future__ import annotations

from pathlib import Path

from polarzoo.baselines.kits import games_with, kit_of
from polarzoo.envs import GAMES

PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"
#: the single-agent solitaire's shipped policy (a Gymnasium env: no kit)
SOLITAIRE_PRETRAINED = PRETRAINED_DIR / "fire_and_ice_solitaire_v0.safetensors"


def _shipped(env_id: str, name: str | None, what: str, attribute: str) -> Path:
    if name is None:
        raise ValueError(f"no {what} for {env_id}; available: {games_with(attribute)}")
    path = PRETRAINED_DIR / name  # an absolute name (a user's kit) stays as it is
    if not path.exists():
        raise FileNotFoundError(f"the {what} file {path} is missing from this installation")
    return path


def pretrained_path(env_id: str) -> Path:
    """The shipped board policy of ``env_id`` (works from any working directory after ``pip
    install``); weight-only files (:mod:`polarzoo.baselines.policies.weights`), nothing in them runs."""
    return _shipped(env_id, kit_of(env_id).pretrained if env_id in GAMES else None, "pretrained model", "pretrained")


def pretrained_az_jax_path(env_id: str) -> Path:
    """The shipped AlphaZero-on-JAX network of ``env_id`` (``az-jax:pretrained``; a ``.json`` beside it)."""
    name = kit_of(env_id).pretrained_az_jax if env_id in GAMES else None
    return _shipped(env_id, name, "pretrained az-jax model", "pretrained_az_jax")
