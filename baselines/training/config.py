"""The trainer's config: one typed schema (:class:`TrainConfig`), its defaults, each game's
settings (its kit's ``hyperparams``, :mod:`polarzoo.baselines.kits`) layered on top, and the
checks that refuse a bad value in one line before any work starts.

    from polarzoo.baselines.training.config import TrainConfig, load_config

    values = load_config("go_with_the_floe_v0", {"total_timesteps": 20_000})   # a plain dict (config.yaml)
    config = TrainConfig.from_mapping(values)                                  # typed, frozen, checked
    config.n_envs                                                              # 16

:class:`TrainConfig`'s fields are the YAML keys (their defaults the ``default`` of every game) and
the ``--help`` of ``polarzoo-train`` shows each game's value; a key the schema does not know is
refused, naming the known ones.  Run folders keep the resolved config as ``config.yaml``.
``train`` and its helpers take the frozen :class:`TrainConfig`; every seed a run derives from its
own is named in :class:`SeedSchedule`; what a run has done so far is its :class:`TrainingState`
(``state.json`` in its checkpoints).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from polarzoo.baselines.agents import pretrained_path
from polarzoo.baselines.evaluation.tournament import seat_names
from polarzoo.baselines.kits import kit_of
from polarzoo.envs import ENVIRONMENTS
from polarzoo.wrappers.single_agent import player_counts

try:
    import yaml
except ImportError:  # a base install: --help still works; training says which extra it needs
    yaml = None

REFERENCE_AGENTS = ("random", "heuristic")


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a MaskablePPO run, with its default (a game's kit overrides them with
    its ``hyperparams``, a user's ``--config`` file that, the command line that)."""

    env: str = ""
    total_timesteps: int = field(default=400_000, metadata={"help": "the training budget"})
    n_envs: int = field(default=8, metadata={"help": "parallel envs"})
    vec_env: str = field(default="dummy", metadata={"help": "dummy | subproc", "choices": ("dummy", "subproc")})
    rollouts: str = field(
        default="lockstep", metadata={"help": "lockstep (SB3's) | async (subproc envs)", "choices": ("lockstep", "async")}
    )
    learning_rate: float = field(default=0.0003, metadata={"range": (0.0, 1.0)})
    learning_rate_end: float | None = field(
        default=None,
        metadata={
            "help": "the learning rate at the budget's last timestep, reached linearly from learning_rate; null: constant",
            "range": (0.0, 1.0),
        },
    )
    n_steps: int = field(default=256, metadata={"help": "steps per env per update"})
    batch_size: int = 512
    n_epochs: int = 5
    gamma: float = field(default=0.99, metadata={"range": (0.0, 1.0)})
    gae_lambda: float = field(default=0.95, metadata={"range": (0.0, 1.0)})
    ent_coef: float = field(default=0.01, metadata={"range": (0.0, 10.0)})
    clip_range: float = field(default=0.2, metadata={"range": (0.0, 10.0)})
    policy: str = field(default="board", metadata={"help": "board | mlp", "choices": ("board", "mlp")})
    board_policy: dict[str, Any] = field(default_factory=lambda: {"dim": 32, "blocks": 3})
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    torch_threads: int = field(
        default=1, metadata={"help": "1: the same weights on every machine; 0 = one per core (results page)", "least": 0}
    )
    update_threads: int = field(default=0, metadata={"help": "0 = as torch_threads", "least": 0})
    device: str = field(default="cpu", metadata={"choices": ("cpu", "cuda", "auto")})
    learner_seat: Any = "alternate"
    shaping: float = field(default=0.0, metadata={"range": (-100.0, 100.0)})
    opponents: dict[str, float] = field(default_factory=lambda: {"random": 0.5, "heuristic": 0.2, "self": 0.3})
    snapshot_every: int = field(default=50_000, metadata={"least": 0})
    max_snapshots: int = 5
    checkpoint_every: int = 20_000
    eval_every: int = field(default=50_000, metadata={"least": 0})
    eval_games: int = 20
    final_eval_games: int = 50
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    init_model: str | None = None
    bc_games: int = field(default=0, metadata={"least": 0})
    bc_epochs: int = 20
    bc_teacher: str = "heuristic"
    bc_opponents: dict[str, float] = field(
        default_factory=lambda: {"random": 0.5, "teacher": 0.5},
        metadata={"help": "the other seats' agents in the teacher's games: 'teacher' or agent specs, with weights"},
    )

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> TrainConfig:
        """The typed config of ``values`` (a loaded YAML mapping); ``ValueError`` naming the first
        unknown key or bad value."""
        if not isinstance(values, dict):
            raise ValueError(f"a config is a mapping of keys to values, got {type(values).__name__}")
        unknown = sorted(set(values) - set(cls.keys()))
        if unknown:
            raise ValueError(f"unknown config key(s) {unknown}; known: {sorted(cls.keys())}")
        config = cls(**values)
        config.check()
        return config

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def check(self) -> None:
        """``ValueError`` naming the first value outside its type or range."""
        for spec in dataclasses.fields(self):
            value, meta = getattr(self, spec.name), spec.metadata
            if spec.type == "int":
                least = meta.get("least", 1)
                if not isinstance(value, int) or isinstance(value, bool) or value < least:
                    raise ValueError(f"{spec.name} must be a whole number >= {least}, got {value!r}")
            elif spec.type in ("float", "float | None") and not (value is None and spec.type == "float | None"):
                low, high = meta.get("range", (float("-inf"), float("inf")))
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                    optional = "null or " if spec.type == "float | None" else ""
                    raise ValueError(f"{spec.name} must be {optional}a number in [{low:g}, {high:g}], got {value!r}")
            elif spec.type == "dict[str, Any]" and not isinstance(value, dict):
                raise ValueError(f"{spec.name} must be a mapping, got {value!r}")
            if "choices" in meta and value not in meta["choices"]:
                choices = list(meta["choices"])
                said = choices[0] if len(choices) == 1 else ", ".join(choices[:-1]) + " or " + choices[-1]
                raise ValueError(f"{spec.name} must be {said}, got {value!r}")
        if not isinstance(self.net_arch, list) or not all(
            isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in self.net_arch
        ):
            raise ValueError(f"net_arch must be a list of layer widths (whole numbers > 0), got {self.net_arch!r}")
        if not isinstance(self.opponents, dict) or not self.opponents:
            raise ValueError("opponents must be a mapping like {random: 0.5, self: 0.5}")
        weights = self.bc_opponents
        if (
            not isinstance(weights, dict)
            or not weights
            or not all(isinstance(k, str) and k for k in weights)
            or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w >= 0 for w in weights.values()
            )
            or sum(weights.values()) <= 0
        ):
            raise ValueError(
                f"bc_opponents must be a mapping of agents ('teacher' or specs) to weights >= 0, summing above 0, got {weights!r}"
            )


#: Config keys added after runs were published or started, with the value that trains as the
#: code before them did: a run's saved config without the key (``--resume``, the benchmark's
#: published configs) takes this value, not today's default.
ADDED_KEYS: dict[str, Any] = {
    "update_threads": 0,
    "rollouts": "lockstep",
    "bc_opponents": {"random": 0.5, "teacher": 0.5},
    "learning_rate_end": None,
}


@dataclass(frozen=True)
class SeedSchedule:
    """Every seed a run derives from its seed (``--seed``), named in one place.

    The evaluations use fixed seeds, the same for every run and every evaluation, so two runs'
    win rates are measured on the same games."""

    run: int

    #: the games of every periodic evaluation (the same at each evaluation of every run)
    PERIODIC_EVALUATION: ClassVar[int] = 10_000
    #: the games of the final evaluation
    FINAL_EVALUATION: ClassVar[int] = 20_000
    #: added to the run's seed for the teacher's demonstration games
    DEMONSTRATIONS_OFFSET: ClassVar[int] = 77

    def envs(self, timesteps: int) -> int:
        """The vectorised envs' seed when they start at ``timesteps`` (0 for a new run; a resume
        without an exact state starts new games from a seed of its own)."""
        return self.run + timesteps

    @property
    def demonstrations(self) -> int:
        """The teacher's demonstration games (game ``g`` is seeded ``demonstrations + g``)."""
        return self.run + self.DEMONSTRATIONS_OFFSET

    def cloning(self, epochs_done: int) -> int:
        """The shuffles of behaviour cloning's epochs after ``epochs_done`` (a resumed cloning
        draws the epochs it has left, not the first ones again)."""
        return self.run + epochs_done

    @property
    def model(self) -> int:
        """SB3's seed (the network's initial weights, the action sampling)."""
        return self.run


@dataclass
class TrainingState:
    """What a run has done so far: its one owner is the run (:func:`polarzoo.baselines.training.ppo.train`),
    which hands it to the cloning, the callback and the checkpoints; ``state.json`` in the
    checkpoints is :meth:`as_dict`."""

    timesteps: int = 0
    seed: int = 0
    snapshots: list[str] = field(default_factory=list)
    bc_epochs_done: int = 0
    bc_losses: list[float] = field(default_factory=list)
    bc_demonstration_seconds: float = 0.0
    #: wall seconds of PPO (every part of a resumed run) from ``train_seconds_from`` timesteps on
    train_seconds: float | None = None
    train_seconds_from: int = 0
    physics_failures: int = 0

    def as_dict(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        if record["train_seconds"] is None:  # (not measured yet: absent, as older checkpoints have it)
            del record["train_seconds"]
        return record

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainingState:
        """The state of a checkpoint's ``state.json`` (keys it does not know are left out; a
        checkpoint of older code lacks some: their defaults)."""
        known = {f.name for f in dataclasses.fields(cls)}
        state = cls(**{key: value for key, value in values.items() if key in known})
        if "train_seconds_from" not in values and "train_seconds" not in values:
            # a checkpoint of code that did not time training: the count starts where it stopped
            state.train_seconds_from = state.timesteps
        return state


#: ``--quick``: settings of a smoke run (about a minute on 2 cores, every game; every output written)
QUICK: dict[str, Any] = {
    "total_timesteps": 1024,
    "n_envs": 2,
    "vec_env": "dummy",
    "rollouts": "lockstep",
    "n_steps": 128,
    "batch_size": 128,
    "n_epochs": 1,
    "eval_every": 512,
    "eval_games": 2,
    "final_eval_games": 2,
    "checkpoint_every": 512,
    "snapshot_every": 512,
}
#: ``--quick`` with a config that clones a teacher first: a few games and one epoch of it
QUICK_BC: dict[str, Any] = {"bc_games": 4, "bc_epochs": 1}

#: config keys that must be positive whole numbers, and those that may also be 0 (= off)
POSITIVE_KEYS = tuple(f.name for f in dataclasses.fields(TrainConfig) if f.type == "int" and f.metadata.get("least", 1) == 1)
NON_NEGATIVE_KEYS = tuple(f.name for f in dataclasses.fields(TrainConfig) if f.type == "int" and f.metadata.get("least", 1) == 0)
#: Real-valued settings and their allowed ranges.
NUMBER_RANGES = {f.name: f.metadata["range"] for f in dataclasses.fields(TrainConfig) if "range" in f.metadata}


def _sections(path: Path) -> dict[str, Any]:
    if yaml is None:
        raise ValueError('a --config file needs PyYAML, in the train extra: pip install "polarzoo[train]"')
    table = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(table, dict):
        raise ValueError("expected a mapping of env ids to settings")
    return table


def load_config(env_id: str, overrides: dict[str, Any] | None = None, path: Path | None = None) -> dict[str, Any]:
    """:class:`TrainConfig`'s defaults, the game's kit's ``hyperparams``, then (a user's
    ``path``) that file's ``default`` and ``env_id`` sections on top, then ``overrides``: a
    user's file only needs the keys it changes.  A plain dict (``config.yaml``)."""
    config = TrainConfig().as_dict()
    known = sorted(config)

    def layer(extra: Any, where: str) -> None:
        if not isinstance(extra, dict):
            raise ValueError(f"{where} must be a mapping")
        unknown = sorted(set(extra) - set(config))
        if unknown:
            raise ValueError(f"unknown config key(s) {unknown} in {where}; known: {known}")
        config.update(copy.deepcopy(dict(extra)))

    layer(dict(kit_of(env_id).hyperparams), f"{env_id}'s kit")
    if path is not None:
        table = _sections(path)
        for section in ("default", env_id):
            layer(table.get(section) or {}, f"section {section!r}")
    for key, value in (overrides or {}).items():
        if value is not None:
            if key not in config:
                raise ValueError(f"unknown config key {key!r}; known: {known}")
            config[key] = value
    config["env"] = env_id
    return config


def saved_run_config(saved: dict[str, Any]) -> dict[str, Any]:
    """The config a run folder's ``config.yaml`` (``saved``) trains with on ``--resume``: keys
    added to the packaged defaults since the run started take the value that trains as the code
    of its start did (:data:`ADDED_KEYS`) where there is one, else today's default."""
    return {**load_config(saved["env"]), **ADDED_KEYS, **saved}


def policy_and_kwargs(config: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """The MaskablePPO policy named by ``config.policy``: ``board`` (the game kit's board network,
    :mod:`polarzoo.baselines.policies`) or ``mlp`` (SB3's flat MLP of ``net_arch``)."""
    if config.policy == "mlp":
        return "MlpPolicy", {"net_arch": list(config.net_arch)}
    if config.policy == "board":
        from polarzoo.baselines.policies.sb3 import BoardPolicy, board_for_env  # the train extra (torch)

        board = board_for_env(config.env)
        kwargs = {"board": board, **dict(config.board_policy or {})}
        if board == "thin_ice":  # the network places targets on the env's own lattice
            kwargs.setdefault("pitch_mm", float((config.env_kwargs or {}).get("pitch_mm", 7.0)))
        return BoardPolicy, kwargs
    raise ValueError(f"policy must be 'board' or 'mlp', got {config.policy!r}")


class InitModelError(ValueError):
    """``init_model`` names a model whose policy differs from the config's."""


def model_file(name: str, env_id: str) -> Path:
    """The model file a setting names: a path, or ``"pretrained"`` (the shipped model of the env)."""
    return pretrained_path(env_id) if name == "pretrained" else Path(name)


def init_model_path(config: TrainConfig) -> Path:
    """The model file named by ``init_model`` (:func:`model_file`)."""
    return model_file(str(config.init_model), config.env)


def evaluation_env_kwargs(config: TrainConfig) -> list[dict[str, Any]]:
    """The env arguments of each game the evaluations play: the config's own, or one per player
    count when ``env_kwargs.num_players`` is a list (Thin Ice, a count drawn per episode)."""
    kwargs = dict(config.env_kwargs)
    counts = player_counts(config.env, kwargs.get("num_players"))
    if counts is None:
        return [kwargs]
    return [{**kwargs, "num_players": n} for n in sorted(set(counts))]


def config_seats(config: TrainConfig) -> list[str]:
    """The seat (agent) names of the game a training config plays, with its env arguments (of
    its largest game when ``num_players`` is a list)."""
    return seat_names(config.env, evaluation_env_kwargs(config)[-1])


def check_config(values: Mapping[str, Any] | TrainConfig) -> TrainConfig:
    """The typed config of ``values``; ``ValueError`` naming the first bad value or unknown key
    (before any work starts)."""
    config = values if isinstance(values, TrainConfig) else TrainConfig.from_mapping(dict(values))
    if isinstance(values, TrainConfig):
        config.check()
    if config.policy == "board":
        from polarzoo.baselines.policies.sb3 import check_board_policy_settings  # the train extra (torch)

        check_board_policy_settings(config.board_policy)
    counts = player_counts(config.env, (config.env_kwargs or {}).get("num_players"))
    if counts is not None and isinstance(config.learner_seat, dict):
        raise ValueError("learner_seat: a mapping of seat weights needs one player count, not a list of them")
    if isinstance(config.learner_seat, dict):
        from polarzoo.wrappers.single_agent import seat_odds

        seat_odds(config.learner_seat, config_seats(config))
    if config.init_model is not None:
        if not isinstance(config.init_model, str) or not config.init_model:
            raise ValueError(
                f"init_model must be a model file path (.safetensors or .zip) or 'pretrained', got {config.init_model!r}"
            )
        path = init_model_path(config)
        if not path.is_file():
            raise ValueError(f"init_model: no model file {path}")
    return config


def config_defaults() -> Callable[[str], str]:
    """``describe(key)``: " (default from the game's kit: 250000 for fire_and_ice_v0, ...)" for
    ``--help``."""
    values: dict[str, dict[str, Any]] = {}
    try:
        for env_id in sorted(ENVIRONMENTS):
            values[env_id] = load_config(env_id)
    except ValueError:
        values = {}

    def describe(key: str) -> str:
        if not values:
            return " (default: the game kit's value, baselines/kits/)"
        per_env = {env_id: config.get(key) for env_id, config in values.items()}
        shown = set(map(repr, per_env.values()))
        if len(shown) == 1:
            return f" (default: {next(iter(per_env.values()))}, from the game's kit)"
        return " (default from the game's kit: " + ", ".join(f"{v} for {e}" for e, v in per_env.items()) + ")"

    return describe


def config_specs(config: Mapping[str, Any]) -> list[str]:
    """Every agent spec a training config names (the opponents, the cloning teacher and its
    opponents, the references): what ``--resume`` of a run folder checks with the spec grammar."""
    specs = [str(spec) for spec in dict(config.get("opponents") or {}) if spec != "self"]
    specs.append(str(config.get("bc_teacher") or "heuristic"))
    specs += [str(spec) for spec in dict(config.get("bc_opponents") or {}) if spec != "teacher"]
    return specs + list(REFERENCE_AGENTS)
