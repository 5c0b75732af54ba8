"""Policies built for the boards, for MaskablePPO (sb3-contrib).

``BoardPolicy`` is a ``MaskableActorCriticPolicy`` whose body is a network that knows the board:

* **Fire & Ice** (``board="fire_and_ice"``, also the solitaire with ``pass_action=False``): one
  embedding per hole (49 tokens, ``(island, position)``), mixed by blocks that follow the game's
  own structure: the position lines inside each island (control), the island lines at each
  position (victory), the island's holes and the position's holes (where a peg can move), and
  the whole board.  Every block is built from sums over those sets and shared weights, with no
  per-hole parameters, so the network is **equivariant under all 28,224 collineation maps**
  (:mod:`polarzoo.envs.fire_and_ice.symmetry`) by construction: a mapped board gives the mapped
  logits and the same value.  Move logits are bilinear in the two holes' embeddings,
  ``logit(from, to) = q(from) . k(to) / sqrt(d)``; PASS and the value come from the pooled board.
* **Go with the Floe** (``board="go_with_the_floe"``): a residual 3x3 convolution stack over the
  8x8 squares; each square's embedding gives its 16 logits (8 directions x 2 distances), PASS and
  the value come from the pooled board.  The row mirror (the game's symmetry,
  :mod:`polarzoo.envs.go_with_the_floe.symmetry`) is built in: ``symmetrize=True`` averages the
  network over the board and its mirror image (logits mapped back), exactly equivariant;
  ``symmetrize="canonical"`` (the training default) runs it once on a canonical orientation of
  the pair, equivariant at the cost of one pass (see :data:`polarzoo.baselines.policies.networks.SYMMETRY_MODES`).

* **Thin Ice** (``board="thin_ice"``): one token per piece slot of every player, the observer's
  pile mixed by self-attention, the other piles pooled (any number of players); placement logits
  from each target's geometry attending to the pile; the square's 8 symmetries by a canonical
  orientation (:class:`polarzoo.baselines.policies.networks.ThinIceNet`).

Select it in a game kit's ``hyperparams`` (or a ``--config`` file) with ``policy: board`` (``policy: mlp`` is SB3's
flat MLP).  The policy reads the flat, [0, 1]-scaled observation that
:class:`polarzoo.wrappers.SingleAgentEnv` gives and reshapes it to the board.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn
from torch.nn import functional as F

from polarzoo.baselines.policies.networks import (  # noqa: F401
    BOARDS,
    FireAndIceNet,
    FloeNet,
    board_for_env,
    build_network,
    update_dtype,
)


def gumbel_noise(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device | str = "cpu") -> torch.Tensor:
    """``log(-log(U))`` for uniform ``U`` of ``shape`` from torch's global generator: subtracted
    from log-probabilities, the argmax is a sample (the Gumbel-max trick).  One call draws what
    :func:`gumbel_max` draws for log-probabilities of that shape (the async collector relies on it)."""
    uniform = torch.rand(shape, dtype=dtype, device=device).clamp_(min=torch.finfo(dtype).tiny)
    return torch.log(-torch.log(uniform))


def gumbel_max(log_probabilities: torch.Tensor) -> torch.Tensor:
    """One action per row of (masked, normalised) ``log_probabilities``, drawn with the Gumbel-max
    trick from torch's global generator."""
    return (
        log_probabilities - gumbel_noise(tuple(log_probabilities.shape), log_probabilities.dtype, log_probabilities.device)
    ).argmax(dim=-1)


def exp_where(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``values.exp()`` where ``mask``, exactly 0 elsewhere, without computing the exponential of
    the masked entries: a masked logit is -1e8, whose exponential (0) takes the CPU's slow path,
    ten times an ordinary one (a third of a Fire & Ice update's time went there)."""
    zero = torch.zeros((), dtype=values.dtype, device=values.device)
    return torch.where(mask, torch.where(mask, values, zero).exp(), zero)


class MaskedLogSumExp(torch.autograd.Function):
    """``raw.logsumexp(-1, keepdim=True)`` of masked logits (masked entries at -1e8), computing
    the exponentials of the legal entries only: the same numbers as torch's ``logsumexp`` and its
    gradient to the bit (a masked entry's term is 0 either way; the same sums in the same order)."""

    @staticmethod
    def forward(ctx: Any, raw: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # noqa: D102
        top = raw.amax(dim=-1, keepdim=True)
        result = exp_where(raw - top, mask).sum(dim=-1, keepdim=True).log_().add_(top)
        ctx.save_for_backward(raw, mask, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # noqa: D102
        raw, mask, result = ctx.saved_tensors
        return grad * exp_where(raw - result, mask), None


class MaskedCategorical:
    """A categorical over thousands of actions, masked, normalised once.

    It is what MaskablePPO reads from sb3-contrib's ``MaskableCategorical`` (``logits``,
    ``probs``, ``sample``, ``log_prob``, ``entropy``, ``apply_masking``, ``masks``) with the same
    numbers (masked logits at -1e8, masked entries left out of the entropy), but it does not build
    a ``torch.distributions.Categorical`` (with argument checks) three times per forward pass, and
    it samples by the Gumbel-max trick instead of ``torch.multinomial``: with 2,402 actions those
    were about a sixth of a Fire & Ice training step.
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self._raw = logits
        self.masks: torch.Tensor | None = None
        self._logits: torch.Tensor | None = None
        self._probs: torch.Tensor | None = None

    def apply_masking(self, masks: Any) -> None:
        self.masks = (
            None if masks is None else torch.as_tensor(masks, dtype=torch.bool, device=self._raw.device).reshape(self._raw.shape)
        )
        self._logits = self._probs = None

    @property
    def logits(self) -> torch.Tensor:  # normalised log-probabilities
        if self._logits is None:
            if self.masks is None:
                self._logits = self._raw - self._raw.logsumexp(dim=-1, keepdim=True)
            else:
                raw = torch.where(self.masks, self._raw, torch.tensor(-1e8, dtype=self._raw.dtype, device=self._raw.device))
                self._logits = raw - MaskedLogSumExp.apply(raw, self.masks)
        return self._logits

    @property
    def probs(self) -> torch.Tensor:
        if self._probs is None:
            self._probs = self.logits.exp() if self.masks is None else exp_where(self.logits, self.masks)
        return self._probs

    def sample(self) -> torch.Tensor:
        return gumbel_max(self.logits)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        p_log_p = self.logits * self.probs
        if self.masks is not None:
            p_log_p = torch.where(self.masks, p_log_p, torch.zeros((), dtype=p_log_p.dtype, device=p_log_p.device))
        return -p_log_p.sum(dim=-1)


def legal_actions(masks: torch.Tensor, num_actions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The legal actions of each row of ``masks`` (any dtype, nonzero = legal), packed to the left:
    ``(legal, valid)``, both ``(rows, most legal actions of a row)``; ``legal`` holds the action
    ids (0 where ``valid`` is False, past a row's last legal action)."""
    masks = masks.reshape(-1, num_actions)
    if masks.dtype != torch.bool:
        masks = masks != 0
    rows, actions = masks.nonzero(as_tuple=True)
    # counted from the nonzero entries: a sum over the mask would copy it to int64 first
    counts = torch.bincount(rows, minlength=masks.shape[0])
    slots = torch.arange(rows.numel(), device=masks.device) - (counts.cumsum(0) - counts)[rows]
    width = max(1, int(counts.max())) if counts.numel() else 1
    legal = torch.zeros((masks.shape[0], width), dtype=torch.long, device=masks.device)
    valid = torch.zeros((masks.shape[0], width), dtype=torch.bool, device=masks.device)
    legal[rows, slots] = actions
    valid[rows, slots] = True
    return legal, valid


def legal_log_prob_entropy(
    legal_logits: torch.Tensor, legal: torch.Tensor, valid: torch.Tensor, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log_prob(actions), entropy)`` of the categorical over the legal actions only: what
    :class:`MaskedCategorical` gives from the full masked logits (masked entries at -1e8 have
    probability 0), computed on the few legal entries of each row instead of thousands.  An
    action that is not legal in its row gets -1e8, as the masked logit would."""
    log_p = torch.log_softmax(legal_logits.masked_fill(~valid, float("-inf")), dim=-1)
    taken = (legal == actions.long().reshape(-1, 1)) & valid
    log_prob = torch.where(taken, log_p, torch.zeros((), dtype=log_p.dtype, device=log_p.device)).sum(dim=-1)
    log_prob = torch.where(taken.any(dim=-1), log_prob, torch.full_like(log_prob, -1e8))
    log_p = torch.where(valid, log_p, torch.zeros((), dtype=log_p.dtype, device=log_p.device))
    return log_prob, -(log_p.exp() * log_p).sum(dim=-1)  # 0 past a row's legal actions: exp(0) * 0


def forward_legal_in_buckets(
    forward_legal: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    features: torch.Tensor,
    legal: torch.Tensor,
    valid: torch.Tensor,
    buckets: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``forward_legal(features, legal)`` (a network's ``(legal logits, value latent)``) run on
    ``buckets`` groups of rows sorted by their number of legal actions, each group padded only to
    its own widest row; the logits come back at ``legal``'s width (0 where ``valid`` is False).
    Where the counts spread widely (Thin Ice: a call has a few legal actions, a placement hundreds)
    one padded width makes every row pay for the widest; rows do not interact, so the numbers
    are one call's to float rounding (the gradients' sums run in another order)."""
    rows = legal.shape[0]
    if buckets <= 1 or rows < 2 * buckets:
        return forward_legal(features, legal)
    counts = valid.sum(dim=1)
    order = torch.argsort(counts, stable=True)
    logits, latents = [], []
    for group in order.tensor_split(buckets):
        width = max(1, int(counts[group].max()))
        group_logits, group_latent = forward_legal(features.index_select(0, group), legal.index_select(0, group)[:, :width])
        logits.append(F.pad(group_logits, (0, legal.shape[1] - width)))
        latents.append(group_latent)
    back = torch.empty_like(order)
    back[order] = torch.arange(rows, device=order.device)
    return torch.cat(logits).index_select(0, back), torch.cat(latents).index_select(0, back)


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution with :class:`MaskedCategorical` inside."""

    def proba_distribution(self, action_logits: torch.Tensor) -> FastMaskableCategoricalDistribution:
        self.distribution = MaskedCategorical(action_logits.view(-1, self.action_dim))  # type: ignore[assignment]
        return self


#: :class:`BoardPolicy`'s own settings (beside SB3's policy keywords): what a config's
#: ``board_policy`` sets, and with ``ortho_init`` what a weight file may carry.
BOARD_POLICY_SETTINGS = ("board", "dim", "blocks", "symmetrize", "pitch_mm", "update_precision")


def check_board_policy_settings(settings: Mapping[str, Any]) -> None:
    """``ValueError`` naming the first key of ``settings`` (a config's ``board_policy``) that is
    neither a :class:`BoardPolicy` setting nor one of SB3's policy keywords, or an
    ``update_precision`` it does not know (before a network is built)."""
    sb3_keywords = set(inspect.signature(MaskableActorCriticPolicy.__init__).parameters) - {
        "self",
        "observation_space",
        "action_space",
        "lr_schedule",
        "kwargs",
    }
    unknown = sorted(set(settings) - set(BOARD_POLICY_SETTINGS) - sb3_keywords)
    if unknown:
        raise ValueError(f"board_policy: unknown setting(s) {unknown}; the board network's: {list(BOARD_POLICY_SETTINGS)}")
    if "update_precision" in settings:
        update_dtype(settings["update_precision"])


class BoardPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with a board network (see the module docstring).

    Args (``policy_kwargs``): ``board`` (one of :data:`BOARDS`), ``dim`` (embedding width),
    ``blocks`` (mixing blocks), ``symmetrize`` (Go with the Floe: True / ``"average"``,
    ``"canonical"``, False / ``"none"``; Thin Ice: ``"canonical"`` or ``"none"``), ``pitch_mm``
    (Thin Ice: the placement lattice's spacing, as the env's argument), ``update_precision``
    (Fire & Ice and the Floe: ``"float32"``, ``"bfloat16"`` or ``"auto"``, the precision of the
    network's trunk in the update and in cloning, where gradients are on; rollouts and play stay
    float32: :data:`~polarzoo.baselines.policies.networks.UPDATE_PRECISIONS`).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Any,
        board: str = "fire_and_ice",
        dim: int = 32,
        blocks: int = 3,
        symmetrize: bool | str = True,
        pitch_mm: float = 7.0,
        update_precision: str = "float32",
        **kwargs: Any,
    ) -> None:
        if board not in BOARDS:
            raise ValueError(f"board must be one of {BOARDS}, got {board!r}")
        self.board, self.dim, self.blocks, self.symmetrize, self.pitch_mm = board, dim, blocks, symmetrize, pitch_mm
        self.update_precision = update_precision
        kwargs.setdefault("ortho_init", False)  # the network initialises its own output layers
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    @property
    def _num_actions(self) -> int:
        assert isinstance(self.action_space, spaces.Discrete)
        return int(self.action_space.n)

    def _build_mlp_extractor(self) -> None:
        size = int(np.prod(self.observation_space.shape or ()))
        dtype = update_dtype(self.update_precision)  # (checks the name before the network is built)
        self.mlp_extractor = build_network(
            self.board, size, self.dim, self.blocks, self.symmetrize, num_actions=self._num_actions, pitch_mm=self.pitch_mm
        )
        if dtype is not None:
            if not hasattr(self.mlp_extractor, "autocast_dtype"):
                if self.update_precision == "bfloat16":
                    raise ValueError(f"the {self.board} network has no bfloat16 trunk (update_precision: float32 or auto)")
            else:
                self.mlp_extractor.autocast_dtype = dtype
        if self.mlp_extractor.latent_dim_pi != self._num_actions:
            raise ValueError(
                f"the {self.board} network gives {self.mlp_extractor.latent_dim_pi} logits, "
                f"the action space has {self._num_actions}"
            )

    def _build(self, lr_schedule: Any) -> None:
        self._build_mlp_extractor()
        self.action_dist = FastMaskableCategoricalDistribution(self._num_actions)
        self.action_net = nn.Identity()  # the network already gives one logit per action
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """MaskablePPO's update: values, log-probabilities of ``actions`` and entropies, computed
        over each row's legal actions only (:func:`legal_log_prob_entropy`; the network scores
        just those where it can, ``forward_legal``), the numbers of the full masked
        distribution to rounding.  Without masks: SB3's own."""
        if action_masks is None:
            return super().evaluate_actions(obs, actions, action_masks)
        features = self.extract_features(obs)
        legal, valid = legal_actions(torch.as_tensor(action_masks, device=self.device), self._num_actions)
        forward_legal = getattr(self.mlp_extractor, "forward_legal", None)
        if forward_legal is not None:
            buckets = getattr(self.mlp_extractor, "legal_buckets", 1)
            if isinstance(features, tuple):  # share_features_extractor=False: two flattens of one observation
                features = features[0]
            legal_logits, latent_vf = forward_legal_in_buckets(forward_legal, features, legal, valid, buckets)
        else:
            logits, latent_vf = self.mlp_extractor(features)
            legal_logits = logits.gather(1, legal)
        log_prob, entropy = legal_log_prob_entropy(legal_logits, legal, valid, actions)
        return self.value_net(latent_vf), log_prob, entropy

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update({name: getattr(self, name) for name in BOARD_POLICY_SETTINGS})
        return data
