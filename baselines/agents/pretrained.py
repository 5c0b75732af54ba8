"""The models shipped in the package (``baselines/pretrained/``, package data)."""

from __future__ import annotations

from pathlib import Path

PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"
#: env id -> file in ``baselines/pretrained/`` (package data; baselines/pretrained/README.md says how each was made):
#: weight-only files (:mod:`polarzoo.baselines.policies.weights`), nothing in them runs
PRETRAINED: dict[str, str] = {
    "fire_and_ice_v0": "fire_and_ice_v0.safetensors",
    "go_with_the_floe_v0": "go_with_the_floe_v0.safetensors",
    "thin_ice_v0": "thin_ice_v0.safetensors",
    "polarzoo/FireAndIceSolitaire-v0": "fire_and_ice_solitaire_v0.safetensors",
}


#: env id -> the AlphaZero-on-JAX network shipped for it (``az-jax:pretrained``; a ``.json`` beside it)
PRETRAINED_AZ_JAX: dict[str, str] = {"fire_and_ice_v0": "fire_and_ice_v0_az_jax.npz"}


def pretrained_path(env_id: str) -> Path:
    """The shipped model for ``env_id`` (works from any working directory after ``pip install``)."""
    if env_id not in PRETRAINED:
        raise ValueError(f"no pretrained model for {env_id}; available: {sorted(PRETRAINED)}")
    path = PRETRAINED_DIR / PRETRAINED[env_id]
    if not path.exists():
        raise FileNotFoundError(f"the pretrained model file {path} is missing from this installation")
    return path
