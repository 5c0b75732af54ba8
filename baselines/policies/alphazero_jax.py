"""The AlphaZero-on-JAX network and search: a small grid network in plain JAX, Gumbel MuZero
(DeepMind's ``mctx``) on the game's JAX twin, and the ``model.npz`` + ``model.json`` format.

Trained by :mod:`polarzoo.baselines.training.alphazero_jax`; played by
:class:`polarzoo.baselines.agents.alphazero_jax.AlphaZeroJaxAgent`.  Needs the ``jax`` extra.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.kits import kit_of
from polarzoo.envs import GAMES
from polarzoo.envs.utils import check_regular_file, read_json_file

#: The ``format`` of a ``model.json`` this module reads.
MODEL_FORMAT = "polarzoo alphazero_jax v1"


def require_jax() -> tuple[Any, Any]:
    try:
        import jax
        import jax.numpy as jnp
        import mctx  # noqa: F401
        import optax  # noqa: F401
    except ImportError as error:
        raise ImportError(
            f'AlphaZero on the JAX twins needs the jax extra ({error.name} is missing): pip install "polarzoo[jax]"'
        ) from error
    return jax, jnp


# ------------------------------------------------------------------------------------ network
def twins() -> list[str]:
    """The JAX twins this network plays: games with a twin (``GameInfo.jax_twin``) whose kit
    declares ``az_jax`` (the channels' scale and the policy head)."""
    return [info.jax_twin for env_id, info in GAMES.items() if info.jax_twin and kit_of(env_id).az_jax]


@functools.cache
def twin_facts(game: str) -> dict[str, Any]:
    """The network's facts for the twin ``game``: ``grid`` (the env's observation shape),
    ``scale`` (each channel's largest value: inputs are scaled to [0, 1]) and ``head`` (the
    kit's ``az_jax``), and ``pettingzoo`` (the env id whose twin it is)."""
    for env_id, info in GAMES.items():
        if info.jax_twin == game and kit_of(env_id).az_jax:
            az_jax = kit_of(env_id).az_jax
            env = info.raw_env()
            grid = tuple(int(n) for n in env.observation_space(env.possible_agents[0])["observation"].shape)
            return {"grid": grid, "scale": list(az_jax["scale"]), "head": az_jax["head"], "pettingzoo": env_id}
    raise ValueError(f"no AlphaZero-on-JAX network for {game!r}; the twins: {twins()}")


@dataclass(frozen=True)
class NetworkConfig:
    game: str
    dim: int = 32
    blocks: int = 2
    key_dim: int = 32


def init_params(config: NetworkConfig, key: Any) -> dict[str, Any]:
    """The network's parameters (a dict of arrays) drawn from ``key``."""
    jax, jnp = require_jax()
    rows, cols, channels = twin_facts(config.game)["grid"]
    d, hidden = config.dim, 2 * config.dim
    keys = iter(jax.random.split(key, 8 + 6 * config.blocks))

    def dense(fan_in: int, fan_out: int, scale: float = 1.0) -> Any:
        return jax.random.normal(next(keys), (fan_in, fan_out)) * (scale / np.sqrt(fan_in))

    params: dict[str, Any] = {
        "embed": dense(channels, d),
        "embed_b": jnp.zeros(d),
        "position": jax.random.normal(next(keys), (rows, cols, d)) * 0.1,
    }
    for b in range(config.blocks):
        params[f"b{b}"] = {
            "ln": jnp.ones(d),
            "self": dense(d, hidden),
            "row": dense(d, hidden),
            "col": dense(d, hidden),
            "all": dense(d, hidden),
            "bias": jnp.zeros(hidden),
            "out": dense(hidden, d, 0.5),
            "out_b": jnp.zeros(d),
        }
    params["value"] = {"w1": dense(d, d), "b1": jnp.zeros(d), "w2": dense(d, 1), "b2": jnp.zeros(1)}
    if twin_facts(config.game)["head"] == "pairs":
        params["policy"] = {"query": dense(d, config.key_dim), "key": dense(d, config.key_dim), "pass": dense(d, 1)}
    else:
        params["policy"] = {"moves": dense(d, 16), "moves_b": jnp.zeros(16), "pass": dense(d, 1)}
    return params


def forward(config: NetworkConfig, params: dict[str, Any], observation: Any) -> tuple[Any, Any]:
    """(logits (B, A), value (B,) in [-1, 1]) for observations (B, rows, cols, channels)."""
    jax, jnp = require_jax()
    spec = twin_facts(config.game)
    x = observation.astype(jnp.float32) / jnp.asarray(spec["scale"], jnp.float32)
    h = x @ params["embed"] + params["embed_b"] + params["position"]
    for b in range(config.blocks):
        p = params[f"b{b}"]
        n = h * jax.lax.rsqrt((h * h).mean(-1, keepdims=True) + 1e-6) * p["ln"]
        mixed = (
            n @ p["self"]
            + n.mean(2, keepdims=True) @ p["row"]
            + n.mean(1, keepdims=True) @ p["col"]
            + n.mean((1, 2), keepdims=True) @ p["all"]
            + p["bias"]
        )
        h = h + jax.nn.gelu(mixed) @ p["out"] + p["out_b"]
    batch = h.shape[0]
    tokens = h.reshape(batch, -1, h.shape[-1])
    pooled = tokens.mean(1)
    v = params["value"]
    value = jnp.tanh(jax.nn.gelu(pooled @ v["w1"] + v["b1"]) @ v["w2"] + v["b2"])[:, 0]
    head = params["policy"]
    if spec["head"] == "pairs":
        scores = jnp.einsum("bsk,bdk->bsd", tokens @ head["query"], tokens @ head["key"]) / np.sqrt(config.key_dim)
        moves = scores.reshape(batch, -1)
    else:
        moves = (tokens @ head["moves"] + head["moves_b"]).reshape(batch, -1)
    logits = jnp.concatenate([moves, pooled @ head["pass"]], axis=1)
    return logits, value


# ------------------------------------------------------------------------------------- search
def masked_logits(logits: Any, mask: Any) -> Any:
    _, jnp = require_jax()
    logits = logits - logits.max(-1, keepdims=True)
    return jnp.where(mask, logits, jnp.finfo(logits.dtype).min)


def make_search(env: Any, config: NetworkConfig, simulations: int, gumbel_scale: float = 1.0) -> Callable:
    """``search(params, key, state) -> mctx.PolicyOutput`` for a batch of twin states: Gumbel
    MuZero with the twin's own ``step`` as the model (two players: discount -1 per ply)."""
    jax, jnp = require_jax()
    import mctx

    step = jax.vmap(env.step)

    def recurrent(params, key, action, state):
        del key
        mover = state.current_player
        state = step(state, action)
        logits, value = forward(config, params, state.observation)
        reward = state.rewards[jnp.arange(state.rewards.shape[0]), mover]
        value = jnp.where(state.terminated, 0.0, value)
        discount = jnp.where(state.terminated, 0.0, -1.0)
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=discount * jnp.ones_like(value),
            prior_logits=masked_logits(logits, state.legal_action_mask),
            value=value,
        )
        return out, state

    def search(params, key, state):
        logits, value = forward(config, params, state.observation)
        root = mctx.RootFnOutput(prior_logits=masked_logits(logits, state.legal_action_mask), value=value, embedding=state)
        return mctx.gumbel_muzero_policy(
            params=params,
            rng_key=key,
            root=root,
            recurrent_fn=recurrent,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            qtransform=mctx.qtransform_completed_by_mix_value,
            gumbel_scale=gumbel_scale,
        )

    return search


def load_model(path: str | Path) -> tuple[NetworkConfig, dict[str, Any], dict[str, Any]]:
    """(network config, params, metadata) of a ``model.npz`` written by :func:`export_model`."""
    _, jnp = require_jax()
    path = Path(path)
    meta_path = path.with_suffix(".json")
    if not path.is_file() or not meta_path.is_file():
        raise FileNotFoundError(f"{path}: an az-jax model is a model.npz with its model.json beside it")
    try:
        meta = read_json_file(meta_path, "az-jax model settings", 1024 * 1024)
        check_regular_file(path, "az-jax model")
        arrays = dict(np.load(path, allow_pickle=False))  # arrays only: a model file is data
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:  # JSONDecodeError is a ValueError
        raise ValueError(f"{path} is not a readable az-jax model ({error})") from None
    if meta.get("format") != MODEL_FORMAT or meta.get("env") not in twins():
        raise ValueError(f"{meta_path} does not describe an az-jax model")
    params: dict[str, Any] = {}
    for name, value in arrays.items():
        node = params
        *parents, leaf = name.split("/")
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = jnp.asarray(value)
    return NetworkConfig(meta["env"], int(meta["dim"]), int(meta["blocks"])), params, meta
