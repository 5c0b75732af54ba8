"""Networks that know the boards (pure PyTorch; used by the SB3 policy in
:mod:`polarzoo.baselines.policies` and the RLlib module in :mod:`polarzoo.baselines.rllib_train`).

* :class:`FireAndIceNet`: one embedding per hole (49 tokens), mixed along the game's structure
  (position lines inside each island, island lines at each position, the island, the position,
  the board), with no per-hole weights, so it is equivariant under all 28,224 collineation maps
  of :mod:`polarzoo.envs.fire_and_ice.symmetry`.  Move logits are bilinear in the two holes'
  embeddings; PASS and the value latent come from the pooled board.
* :class:`FloeNet`: residual 3x3 convolutions over the 8x8 squares, 16 logits per square
  (direction x distance), with the row mirror built in (averaged over it, exactly equivariant, or
  run once on a canonical orientation; :data:`SYMMETRY_MODES`).

Both read the flat observation (any float scale) and return ``(logits, value_latent)``.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
from torch import nn

from polarzoo.baselines.kits import games_with, kit_of
from polarzoo.envs import GAMES
from polarzoo.envs.fire_and_ice import rules as fire_rules
from polarzoo.envs.go_with_the_floe import kernels as floe_kernels
from polarzoo.envs.go_with_the_floe import rules as floe_rules
from polarzoo.envs.go_with_the_floe import symmetry as floe_symmetry


def line_incidence() -> torch.Tensor:
    """The Fano plane's (7 lines, 7 points) 0/1 incidence matrix, from the rules' ``LINES``.
    A block mixes with it along either axis of the (island, position) grid: position lines
    inside each island (sums: island control), island lines at each position (sums: victory)."""
    incidence = np.zeros((fire_rules.NUM_LINES, fire_rules.NUM_POSITIONS), dtype=np.float32)
    for line, points in enumerate(fire_rules.LINES):
        incidence[line, points] = 1.0
    return torch.from_numpy(incidence)


#: ``BoardPolicy(update_precision=...)``: the precision of a board network's trunk (its mixing
#: blocks or convolutions, the bulk of its arithmetic) wherever gradients are computed, in
#: MaskablePPO's update and in behaviour cloning.  ``"float32"``; ``"bfloat16"``: the trunk's matrix
#: products and convolutions autocast to bfloat16 (float32 accumulation; norms, heads and logits
#: stay float32); ``"auto"``: bfloat16 where the CPU multiplies it natively
#: (:func:`native_bfloat16`), float32 elsewhere.  Rollouts, evaluations and play (no gradients)
#: always run in float32, so a model plays the same whatever it was trained with.
UPDATE_PRECISIONS = ("float32", "bfloat16", "auto")


def native_bfloat16() -> bool:
    """Whether this CPU has bfloat16 arithmetic (AVX512-BF16 or AMX); without it, bfloat16 is
    emulated and slower than float32.  (PyTorch's own CPU probes, private: a build without them
    counts as no.)"""
    probes = (getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))
    return any(bool(probe()) for probe in probes if probe is not None)


def update_dtype(precision: str) -> torch.dtype | None:
    """The autocast dtype of a trunk with gradients on for an :data:`UPDATE_PRECISIONS` entry
    (``None``: float32, no autocast); ``ValueError`` for another entry."""
    if precision not in UPDATE_PRECISIONS:
        raise ValueError(f"update_precision must be one of {UPDATE_PRECISIONS}, got {precision!r}")
    if precision == "auto":
        return torch.bfloat16 if native_bfloat16() else None
    return torch.bfloat16 if precision == "bfloat16" else None


def _autocast(network: nn.Module, device: torch.device) -> contextlib.AbstractContextManager:
    """``network.autocast_dtype``'s autocast on ``device`` while gradients are on (the update and
    cloning); a no-op otherwise."""
    dtype = getattr(network, "autocast_dtype", None)
    if dtype is None or not torch.is_grad_enabled():
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


class FanoBlock(nn.Module):
    """One residual mixing step over the 49 hole embeddings, held island-major as a (7 islands,
    7 positions, batch, d) grid.

    Each set (a position line within an island, an island line at a position, an island, a
    position, the board) is summed or averaged first, transformed once per set with weights
    shared by all sets of its kind, then sent back to its holes; no weight belongs to a particular
    hole.  The line sums are products with the 7x7 incidence matrix along one grid axis (a few
    thousand multiply-adds a board, where a dense 113x49 set matrix took 177 thousand).  With the
    batch inside the grid both products are plain matrix products over contiguous memory (a
    (batch, island, position) layout needs a transposing copy or B*7 tiny products)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.hole = nn.Linear(dim, dim)
        self.position_lines = nn.Linear(dim, dim)
        self.island_lines = nn.Linear(dim, dim)
        self.island = nn.Linear(dim, dim, bias=False)
        self.position = nn.Linear(dim, dim, bias=False)
        self.board = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, h: torch.Tensor, incidence: torch.Tensor) -> torch.Tensor:  # h: (7, 7, B, d), incidence: (7, 7)
        islands, positions, batch, dim = h.shape
        # (island, line) <- sum over the line's positions: island control
        position_lines = torch.relu(
            self.position_lines(torch.matmul(incidence, h.view(islands, positions, -1)).view(islands, -1, batch, dim))
        )
        # (line, position) <- sum over the line's islands: three islands in a line win
        island_lines = torch.relu(self.island_lines(torch.matmul(incidence, h.view(islands, -1)).view(-1, positions, batch, dim)))
        # the island, position and board terms are small: added to each other before the grid
        context = self.island(h.mean(dim=1))[:, None] + (self.position(h.mean(dim=0)) + self.board(h.mean(dim=(0, 1))))[None]
        update = (
            self.hole(h)
            + torch.matmul(incidence.T, position_lines.view(islands, -1, batch * dim)).view(h.shape)
            + torch.matmul(incidence.T, island_lines.view(-1, positions * batch * dim)).view(h.shape)
            + context
        )
        return self.norm(h + self.out(torch.relu(update)))


class FireAndIceNet(nn.Module):
    """Hole tokens -> (action logits, value latent); see the module docstring."""

    #: the trunk's autocast dtype with gradients on (None: float32; :func:`update_dtype`)
    autocast_dtype: torch.dtype | None = None

    def __init__(self, channels: int, dim: int = 32, blocks: int = 3, pass_action: bool = True) -> None:
        super().__init__()
        self.channels, self.dim, self.pass_action = channels, dim, pass_action
        self.register_buffer("incidence", line_incidence(), persistent=False)
        self.embed = nn.Linear(channels, dim)
        self.blocks = nn.ModuleList(FanoBlock(dim) for _ in range(blocks))
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.pooled = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU())
        self.pass_logit = nn.Linear(dim, 1)
        self.value_latent = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU())
        # Start close to the uniform policy: the first PPO steps then explore evenly.
        for layer in (self.query, self.key, self.pass_logit):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)
        self.latent_dim_pi = fire_rules.NUM_MOVE_ACTIONS + (1 if pass_action else 0)
        self.latent_dim_vf = dim

    def _tokens(self, features: torch.Tensor) -> torch.Tensor:
        # hole = 7 * island + position, so hole-major is the (island, position) grid
        h = self.embed(features.reshape(-1, fire_rules.NUM_HOLES, self.channels).transpose(0, 1))
        h = h.view(fire_rules.NUM_ISLANDS, fire_rules.NUM_POSITIONS, -1, self.dim)
        with _autocast(self, h.device):
            for block in self.blocks:
                h = block(h, self.incidence)
        return h.float().view(fire_rules.NUM_HOLES, -1, self.dim).transpose(0, 1)  # (B, 49, d)

    @staticmethod
    def _pool(h: torch.Tensor) -> torch.Tensor:
        return torch.cat([h.mean(dim=1), h.amax(dim=1)], dim=-1)

    def _logits(self, h: torch.Tensor) -> torch.Tensor:  # h: (B, 49, d)
        scores = torch.matmul(self.query(h), self.key(h).transpose(1, 2)) / math.sqrt(self.dim)
        logits = scores.flatten(1)  # action = 49 * from + to
        if self.pass_action:
            logits = torch.cat([logits, self.pass_logit(self.pooled(self._pool(h)))], dim=-1)
        return logits

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self._tokens(features)
        return self._logits(h), self.value_latent(self._pool(h))

    def forward_legal(self, features: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(the logits of the actions in legal, value latent)``: ``forward``'s logits gathered
        at ``legal`` (B, L), scoring only those pairs of holes (a few dozen of 2,402)."""
        h = self._tokens(features)
        pooled = self._pool(h)
        moves = fire_rules.NUM_MOVE_ACTIONS
        pairs = legal.clamp(max=moves - 1)
        # rows of the (B * 49, d) tables: index_select (its backward a row-wise index_add) is
        # many times faster than gather with an expanded index
        base = torch.arange(0, h.shape[0] * fire_rules.NUM_HOLES, fire_rules.NUM_HOLES, device=h.device).unsqueeze(1)
        queries = self.query(h).reshape(-1, self.dim).index_select(0, (base + pairs // fire_rules.NUM_HOLES).reshape(-1))
        keys = self.key(h).reshape(-1, self.dim).index_select(0, (base + pairs % fire_rules.NUM_HOLES).reshape(-1))
        logits = (queries * keys).sum(-1).view(legal.shape) / math.sqrt(self.dim)
        if self.pass_action:
            logits = torch.where(legal == moves, self.pass_logit(self.pooled(pooled)), logits)
        return logits, self.value_latent(pooled)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self._logits(self._tokens(features))

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_latent(self._pool(self._tokens(features)))


class _ResidualConv(nn.Module):
    """Two 3x3 convolutions with a global-pooling bias between them (KataGo's trick): a 3x3 stack
    alone sees five squares away, and a bear must know where a seal is across the board."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(dim, dim, 3, padding=1)
        self.conv2 = nn.Conv2d(dim, dim, 3, padding=1)
        self.pool_bias = nn.Linear(2 * dim, dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(h))
        pooled = torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=-1)
        x = torch.relu(x + self.pool_bias(pooled)[:, :, None, None])
        return torch.relu(h + self.conv2(x))


class FloeReach(nn.Module):
    """Reach planes over the isolation graph of :mod:`polarzoo.envs.go_with_the_floe.rules`
    (ice squares without a hole; king steps, and jumps over one hole), computed from the
    observation by the compiled kernel :func:`polarzoo.envs.go_with_the_floe.kernels.reach_planes`
    (the rules' own ``spread_bits`` on uint64 bitboards), so the network sees what the game's end
    test sees:

    * squares a bear can reach in at most 1, 2, 3, 4 and 6 moves, and at all;
    * squares a seal can reach in at most 1, 2 and 3 moves, and at all.

    Read from the observation's channels (mine, opponent's, holes, ice, "I play White"), so the
    planes are the same for either seat's view and commute with the row mirror.  No gradient
    flows through them.
    """

    BEAR_STEPS = (1, 2, 3, 4, 6)
    SEAL_STEPS = (1, 2, 3)
    num_planes = len(BEAR_STEPS) + len(SEAL_STEPS) + 2

    def __init__(self) -> None:
        super().__init__()
        self._bear_marks = np.array(self.BEAR_STEPS, dtype=np.int64)
        self._seal_marks = np.array(self.SEAL_STEPS, dtype=np.int64)

    @torch.no_grad()
    def forward(self, board: torch.Tensor) -> torch.Tensor:  # (B, C, 8, 8) -> (B, planes, 8, 8)
        batch, channels = board.shape[:2]
        # One kernel call: a loop of bit operations per board, where tensor operations paid
        # PyTorch's per-call overhead on every one of up to 52 flood steps.
        features = np.ascontiguousarray(board.detach().permute(0, 2, 3, 1).reshape(batch, -1).to("cpu", torch.float32).numpy())
        planes = np.empty((batch, self.num_planes, floe_rules.NUM_SQUARES), dtype=np.float32)
        floe_kernels.reach_planes(features, channels, self._bear_marks, self._seal_marks, planes)
        return torch.from_numpy(planes).view(batch, -1, floe_rules.SIZE, floe_rules.SIZE).to(board.device, board.dtype)


#: How :class:`FloeNet` uses the row mirror: ``"average"`` (True) runs the network on the board
#: and on its mirror image and averages (exactly equivariant, twice the cost); ``"canonical"``
#: runs it once on whichever of the two is the canonical one (equivariant on every board that is
#: not its own mirror image, the cost of one pass); ``"none"`` (False) ignores the symmetry.
SYMMETRY_MODES = ("average", "canonical", "none")


def symmetry_mode(symmetrize: bool | str) -> str:
    """The :data:`SYMMETRY_MODES` entry for a ``symmetrize`` setting (True / False or a name)."""
    if symmetrize is True or symmetrize is False:
        return "average" if symmetrize else "none"
    if symmetrize not in SYMMETRY_MODES:
        raise ValueError(f"symmetrize must be true, false or one of {SYMMETRY_MODES}, got {symmetrize!r}")
    return str(symmetrize)


class FloeNet(nn.Module):
    """8x8 squares (the observation plus :class:`FloeReach` planes) -> (action logits, value
    latent), residual 3x3 convolutions with global pooling; the row mirror is used as
    ``symmetrize`` says (:data:`SYMMETRY_MODES`)."""

    mirror_actions: torch.Tensor  # buffers
    canonical_skew: torch.Tensor
    #: the trunk's autocast dtype with gradients on (None: float32; :func:`update_dtype`)
    autocast_dtype: torch.dtype | None = None

    def __init__(self, channels: int, dim: int = 32, blocks: int = 2, symmetrize: bool | str = True) -> None:
        super().__init__()
        self.channels, self.symmetrize = channels, symmetry_mode(symmetrize)
        self.reach = FloeReach()
        self.stem = nn.Sequential(nn.Conv2d(channels + FloeReach.num_planes, dim, 3, padding=1), nn.ReLU())
        self.blocks = nn.Sequential(*(_ResidualConv(dim) for _ in range(blocks)))
        self.move_logits = nn.Conv2d(dim, floe_rules.ACTIONS_PER_SQUARE, 1)
        self.pass_logit = nn.Linear(2 * dim, 1)
        self.value_latent = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU())
        for layer in (self.move_logits, self.pass_logit):
            nn.init.normal_(layer.weight, std=0.01)
            assert layer.bias is not None
            nn.init.zeros_(layer.bias)
        self.register_buffer("mirror_actions", torch.as_tensor(np.array(floe_symmetry.action_map(1))), persistent=False)
        # canonical: a board is flipped when x . (w - mirror(w)) < 0 for fixed random weights w.
        # The sign turns over under the mirror, so a board and its mirror image share one
        # canonical form; a board that is its own mirror image gives 0 (up to rounding) and stays.
        weights = np.random.default_rng(20261130).random((floe_rules.NUM_SQUARES, channels))
        skew = weights - weights[np.asarray(floe_symmetry.square_map(1))]
        self.register_buffer("canonical_skew", torch.as_tensor(skew.reshape(-1), dtype=torch.float64), persistent=False)
        self.latent_dim_pi = floe_rules.NUM_ACTIONS
        self.latent_dim_vf = dim

    def _single(self, board: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # board: (B, C, 8 rows, 8 cols)
        with _autocast(self, board.device):
            h = self.blocks(self.stem(board))
        h = h.float()
        # (B, 16, 8, 8) -> (B, 64 squares, 16) with square = 8 * row + col: action = 16 * square + k.
        moves = self.move_logits(h).permute(0, 2, 3, 1).flatten(1)
        pooled = torch.cat([h.mean(dim=(2, 3)), h.amax(dim=(2, 3))], dim=-1)
        return torch.cat([moves, self.pass_logit(pooled)], dim=-1), self.value_latent(pooled)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        board = features.reshape(-1, floe_rules.SIZE, floe_rules.SIZE, self.channels).permute(0, 3, 1, 2)
        board = torch.cat([board, self.reach(board)], dim=1)  # the reach of the mirror is the mirrored reach
        if self.symmetrize == "none":
            return self._single(board)
        if self.symmetrize == "canonical":
            flip = (features.reshape(len(board), -1).double() @ self.canonical_skew) < -1e-9
            logits, value = self._single(torch.where(flip[:, None, None, None], board.flip(2), board))
            # A flipped board's logit for action a belongs to action mirror(a) (an involution).
            return torch.where(flip[:, None], logits[:, self.mirror_actions], logits), value
        logits, value = self._single(board)
        mirrored_logits, mirrored_value = self._single(board.flip(2))
        return 0.5 * (logits + mirrored_logits[:, self.mirror_actions]), 0.5 * (value + mirrored_value)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[1]


#: The boards a network exists for (the solitaire uses the Fire & Ice network without PASS).
BOARDS = ("fire_and_ice", "fire_and_ice_solitaire", "go_with_the_floe", "thin_ice")


def build_network(
    board: str,
    observation_size: int,
    dim: int = 32,
    blocks: int = 3,
    symmetrize: bool | str = True,
    num_actions: int | None = None,
    pitch_mm: float = 7.0,
) -> nn.Module:
    """The network for ``board`` reading flat observations of ``observation_size`` numbers
    (Thin Ice also needs ``num_actions``, which fixes the lattice, and the lattice pitch)."""
    if board not in BOARDS:
        raise ValueError(f"board must be one of {BOARDS}, got {board!r}")
    if board == "thin_ice":
        if num_actions is None:
            raise ValueError("the thin_ice network needs num_actions (the action space's size)")
        return ThinIceNet(observation_size, num_actions, dim, blocks, symmetrize, pitch_mm)
    if board == "go_with_the_floe":
        return FloeNet(observation_size // floe_rules.NUM_SQUARES, dim, blocks, symmetrize)
    return FireAndIceNet(observation_size // fire_rules.NUM_HOLES, dim, blocks, pass_action=board == "fire_and_ice")


def board_for_env(env_id: str) -> str:
    """The ``board`` of a game (its kit's ``network``: ``BoardPolicy(board=...)``,
    :func:`build_network`); ``ValueError`` for a game without one."""
    board = kit_of(env_id).network if env_id in GAMES else None
    if board is None:
        raise ValueError(f"no board policy for {env_id}; games with one: {games_with('network')} (use policy: mlp)")
    return board


class ThinIceNet(nn.Module):
    """Thin Ice piles -> (action logits, value latent), for any number of players.

    * **Tokens**: one per piece slot of every player (its 12 slot features, the player's two
      "out" flags, whether it is the observer's, and Fourier features of its position), encoded
      by shared weights: the slot order is arbitrary, and nothing in the network depends on it
      except the pick-up logit of each slot, which is read from that slot's own token.
    * **The observer's pile** is mixed by ``blocks`` self-attention layers (with a learned empty
      token, so an empty pile is a valid set); each other player's pile is pooled (mean and max)
      and the players are pooled again, so one network fits 2-6 players.
    * **Placement logits**, one per (size, cell, orientation) target: a query made from the
      target's geometry (its point on the lattice in cm, Fourier features, the orientation and
      size) attends to the observer's pile tokens; the attended vector, the query and the
      context give the logit.  **Calls, DONE** and the value come from the pooled context.
    * **Symmetry** (:mod:`polarzoo.envs.thin_ice.symmetry`): ``symmetrize="canonical"`` runs the
      network once on the one of the 8 rotated/mirrored observations that a fixed linear score
      ranks first and maps the placement logits back, so the policy is invariant (value) and
      equivariant (logits) under all 8 maps except at ties (e.g. the empty pile);
      ``"none"`` uses the observation as it is.
    """

    target_features: torch.Tensor  # buffers
    sym_actions: torch.Tensor

    #: The update scores each row's legal actions in 4 groups of rows of like counts
    #: (:func:`polarzoo.baselines.policies.sb3.forward_legal_in_buckets`): a call has a few legal
    #: actions, a placement 294 or more, and padding every row to the widest made a 256-row
    #: minibatch's update step 2.1x slower (``python -m benchmarks.update_step``: 109 against 51 ms).
    legal_buckets = 4

    FREQUENCIES_CM = (0.5, 1.0, 2.0, 4.0)  # Fourier feature periods' inverse scale (cm): pieces are 1.4-2.5 cm wide

    def __init__(
        self,
        observation_size: int,
        num_actions: int,
        dim: int = 32,
        blocks: int = 2,
        symmetrize: bool | str = "canonical",
        pitch_mm: float = 7.0,
    ) -> None:
        super().__init__()
        from polarzoo.envs.thin_ice import rules as thin_rules
        from polarzoo.envs.thin_ice import symmetry as thin_symmetry

        self.rules = thin_rules
        players, rest = divmod(observation_size - thin_rules.GLOBAL_FEATURES, thin_rules.PLAYER_FEATURES + 1)
        if rest or players < 2:
            raise ValueError(f"not a Thin Ice observation size: {observation_size}")
        targets, rest = divmod(num_actions - thin_rules.NUM_CALLS - thin_rules.MAX_SLOTS - 1, 3)
        grid = int(round((targets / thin_rules.NUM_ORIENTATIONS) ** 0.5))
        if rest or grid * grid * thin_rules.NUM_ORIENTATIONS != targets:
            raise ValueError(f"not a Thin Ice action count: {num_actions}")
        self.num_players, self.grid, self.num_targets, self.dim = players, grid, targets, dim
        self.symmetrize = "none" if symmetrize is False else ("canonical" if symmetrize is True else str(symmetrize))
        if self.symmetrize not in ("canonical", "none"):
            raise ValueError(f"symmetrize must be 'canonical' or 'none' for Thin Ice, got {symmetrize!r}")
        fourier = 4 * len(self.FREQUENCIES_CM)
        self.token_in = thin_rules.SLOT_FEATURES + 3 + fourier
        self.token = nn.Sequential(nn.Linear(self.token_in, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.empty = nn.Parameter(torch.zeros(1, 1, dim))
        self.mix = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True) for _ in range(blocks)
        )
        self.others = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU())
        globals_in = thin_rules.NUM_CALLS + 3 + 3 + 3 + 1 + 3 + 1
        self.globals = nn.Sequential(nn.Linear(globals_in, dim), nn.ReLU())
        self.context = nn.Sequential(nn.Linear(4 * dim, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        # Targets: (3 sizes x targets) query features, fixed.
        cells = np.arange(grid * grid)
        row, col = np.divmod(cells, grid)
        centre = (grid - 1) / 2
        xy = np.stack([(col - centre), (row - centre)], axis=1) * pitch_mm / 10.0  # cm
        query = []
        for size in range(3):
            for cell in range(grid * grid):
                for orientation in range(thin_rules.NUM_ORIENTATIONS):
                    one_hot = np.zeros(thin_rules.NUM_ORIENTATIONS + 3)
                    one_hot[orientation] = 1
                    one_hot[thin_rules.NUM_ORIENTATIONS + size] = 1
                    query.append(np.concatenate([xy[cell] / 3.0, self._fourier_np(xy[cell]), one_hot]))
        self.register_buffer("target_features", torch.as_tensor(np.array(query), dtype=torch.float32), persistent=False)
        self.query = nn.Sequential(nn.Linear(self.target_features.shape[1], dim), nn.ReLU(), nn.Linear(dim, dim))
        # hidden(target) = relu(attended values + W_q query + W_c context): the value projection
        # is applied to the 16 pile tokens, not to each of the 3T attended vectors (same function).
        self.keys, self.values = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.place_query, self.place_context = nn.Linear(dim, dim), nn.Linear(dim, dim, bias=False)
        self.place_out = nn.Linear(dim, 1)
        self.pick_out = nn.Linear(2 * dim, 1)
        self.call_out = nn.Linear(dim, thin_rules.NUM_CALLS)
        self.done_out = nn.Linear(dim, 1)
        for layer in (self.place_out, self.pick_out, self.call_out, self.done_out):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)
        # Symmetry tables: action maps here; observation maps and the canonical score per number
        # of players (the same weights play any), built when a size is first seen.
        self._symmetry = thin_symmetry
        self.register_buffer(
            "sym_actions",
            torch.as_tensor(np.stack([thin_symmetry.action_map(k, grid) for k in range(thin_symmetry.NUM_SYMMETRIES)])),
            persistent=False,
        )
        self._observation_tables: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        self.latent_dim_pi = num_actions
        self.latent_dim_vf = dim

    @classmethod
    def _fourier_np(cls, xy: np.ndarray) -> np.ndarray:
        angles = np.concatenate([xy * f * np.pi for f in cls.FREQUENCIES_CM], axis=-1)
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)

    def _fourier(self, xy: torch.Tensor) -> torch.Tensor:
        angles = torch.cat([xy * f * math.pi for f in self.FREQUENCIES_CM], dim=-1)
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)

    def players_of(self, features: torch.Tensor) -> int:
        """The number of players (seats, absent ones included) of a batch of flat observations (any of 2..6)."""
        return self.rules.players_of_size(features.shape[1])

    def _tables(self, players: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(8, size) observation index and sign of each map, and the canonical score (size,)."""
        key = (players, str(device))
        if key not in self._observation_tables:
            index, sign = zip(*(self._symmetry.observation_permutation(k, players) for k in range(self._symmetry.NUM_SYMMETRIES)))
            # One fixed random linear score per observation size (the first 388 numbers of the
            # two-player one are those the models were trained with).
            score = np.random.default_rng(20261201).normal(size=self.rules.observation_size(players))
            self._observation_tables[key] = (
                torch.as_tensor(np.stack(index), device=device),
                torch.as_tensor(np.stack(sign), device=device),
                torch.as_tensor(score, dtype=torch.float64, device=device),
            )
        return self._observation_tables[key]

    def canonical(self, features: torch.Tensor) -> torch.Tensor:
        """Per sample, the index of the map that takes the observation to its canonical form."""
        index, sign, score = self._tables(self.players_of(features), features.device)
        images = features[:, index] * sign  # (B, 8, size)
        return (images.double() @ score).argmax(dim=1)

    def _single(self, x: torch.Tensor, legal: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value latent) of observations ``x``; with ``legal`` (B, L) action ids, the
        logits of those actions only (B, L): a placement's hidden vector is made for the listed
        targets alone (the update's largest cost, 3T of them a sample otherwise)."""
        r = self.rules
        batch, n = x.shape[0], self.players_of(x)
        blocks = x[:, : n * r.PLAYER_FEATURES].reshape(batch, n, r.PLAYER_FEATURES)
        slots = blocks[:, :, : r.MAX_SLOTS * r.SLOT_FEATURES].reshape(batch, n, r.MAX_SLOTS, r.SLOT_FEATURES)
        flags = blocks[:, :, None, r.MAX_SLOTS * r.SLOT_FEATURES :].expand(batch, n, r.MAX_SLOTS, 2)
        own = torch.zeros(batch, n, r.MAX_SLOTS, 1, dtype=x.dtype, device=x.device)
        own[:, 0] = 1.0
        xy_cm = slots[..., 5:7] * 25.0  # observation positions are metres / 0.25
        slots = torch.cat([slots[..., :5], slots[..., 5:8] * 25.0 / 3.0, slots[..., 8:]], dim=-1)
        tokens = self.token(torch.cat([slots, flags, own, self._fourier(xy_cm)], dim=-1))  # (B, n, 15, d)
        valid = (slots[..., 0] + slots[..., 1]) > 0  # in the pile or in hand
        # The observer's pile: self-attention over its tokens and a learned empty token.
        mine = torch.cat([self.empty.expand(batch, 1, self.dim), tokens[:, 0]], dim=1)
        padding = torch.cat([torch.zeros(batch, 1, dtype=torch.bool, device=x.device), ~valid[:, 0]], dim=1)
        for layer in self.mix:
            mine = layer(mine, src_key_padding_mask=padding)
        weights = (~padding).to(x.dtype)
        mine_mean = (mine * weights[..., None]).sum(1) / weights.sum(1, keepdim=True)
        mine_max = mine.masked_fill(padding[..., None], -1e4).amax(1)
        # The other piles: pooled per player, then over players.
        other_valid = valid[:, 1:].to(x.dtype)[..., None]
        other_tokens = tokens[:, 1:]
        other_mean = (other_tokens * other_valid).sum(2) / other_valid.sum(2).clamp(min=1)
        other_max = other_tokens.masked_fill(other_valid == 0, -1e4).amax(2).clamp(min=-1.0)
        others = self.others(torch.cat([other_mean, other_max], dim=-1)).mean(1)
        g = x[:, n * r.PLAYER_FEATURES :]
        turn_mine = g[:, 18:19]  # whose turn, relative to the observer: the observer's entry
        globals_ = torch.cat([g[:, :18], turn_mine, g[:, 18 + n :]], dim=-1)
        context = self.context(torch.cat([mine_mean, mine_max, others, self.globals(globals_)], dim=-1))  # (B, d)
        # Placement logits: target queries attend to the observer's pile.  hidden(target) =
        # relu(attention + W_q query + W_c context), computed without (B, 3T, d) temporaries
        # beside the result (the update's largest cost): the padded keys get -1e4 added inside
        # the score product (the empty token is never padded, so their weights underflow to 0 as
        # with a fill), and as the attention weights sum to 1 the context term rides on the
        # values (16 per sample) instead of being added to every target.
        queries = self.query(self.target_features)  # (3T, d)
        keys, values = self.keys(mine), self.values(mine)  # (B, 16, d)
        key_bias = padding.to(keys.dtype)[:, None, :] * -1e4  # (B, 1, 16)
        values = values + self.place_context(context)[:, None]
        pick = self.pick_out(torch.cat([mine[:, 1:], context[:, None].expand(-1, r.MAX_SLOTS, -1)], dim=-1)).squeeze(-1)
        if legal is None:
            scores = torch.baddbmm(key_bias, queries.expand(batch, -1, -1), keys.transpose(1, 2), alpha=1.0 / math.sqrt(self.dim))
            hidden = torch.baddbmm(self.place_query(queries), scores.softmax(-1), values).relu_()  # (B, 3T, d)
            place = self.place_out(hidden).squeeze(-1)
            return torch.cat([self.call_out(context), place, pick, self.done_out(context)], dim=-1), context
        # The listed targets only: (B, L) of them, the rest of each row's actions read from the
        # 25 logits that are not placements (calls, pick-ups, DONE).
        targets = (legal - r.NUM_CALLS).clamp(0, 3 * self.num_targets - 1)
        # index_select, not queries[targets]: the backward of advanced indexing accumulates in
        # parallel (its sums' order, so the weights, would vary run to run on two threads)
        flat = targets.reshape(-1)
        chosen = queries.index_select(0, flat).view(*targets.shape, self.dim)  # (B, L, d)
        scores = torch.baddbmm(key_bias, chosen, keys.transpose(1, 2), alpha=1.0 / math.sqrt(self.dim))
        placed = self.place_query(queries).index_select(0, flat).view(*targets.shape, self.dim)
        hidden = torch.baddbmm(placed, scores.softmax(-1), values).relu_()  # (B, L, d)
        place = self.place_out(hidden).squeeze(-1)
        others = torch.cat([self.call_out(context), pick, self.done_out(context)], dim=-1)  # (B, 9 + 15 + 1)
        placement = (legal >= r.NUM_CALLS) & (legal < r.NUM_CALLS + 3 * self.num_targets)
        rest = torch.where(legal < r.NUM_CALLS, legal, legal - 3 * self.num_targets).clamp(0, others.shape[1] - 1)
        return torch.where(placement, place, others.gather(1, rest)), context

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and value latent of a batch of observations of one size; rows padded with absent
        seats (:func:`polarzoo.envs.thin_ice.rules.pad_observation`, a trainer's one shape for games
        of several sizes) are read without them, exactly as their unpadded observations."""
        return self._by_present_players(features, None)

    def forward_legal(self, features: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(the logits of the actions in legal, value latent)``: ``forward``'s logits gathered
        at ``legal`` (B, L), with placement hidden vectors made for those targets only (a
        placement's legal targets are of one size: a third of the 3T or fewer)."""
        return self._by_present_players(features, legal)

    def _by_present_players(self, features: torch.Tensor, legal: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        features = features.reshape(features.shape[0], -1).float()
        r, n = self.rules, self.players_of(features)
        absent = features[:, : n * r.PLAYER_FEATURES].reshape(len(features), n, r.PLAYER_FEATURES)[:, :, -1] < -0.5
        if not bool(absent.any()):
            return self._forward_players(features, legal)
        present = n - absent.sum(1)
        logits = features.new_empty(len(features), self.latent_dim_pi if legal is None else legal.shape[1])
        value = features.new_empty(len(features), self.latent_dim_vf)
        for count in present.unique().tolist():
            rows = (present == count).nonzero().squeeze(1)
            kept = torch.as_tensor(r.present_indices(n, count), device=features.device)
            logits[rows], value[rows] = self._forward_players(features[rows][:, kept], None if legal is None else legal[rows])
        return logits, value

    def _forward_players(self, features: torch.Tensor, legal: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if self.symmetrize == "none":
            return self._single(features, legal)
        k = self.canonical(features)
        index, sign, _ = self._tables(self.players_of(features), features.device)
        rows = torch.arange(len(features), device=features.device)
        # The canonical position's logit for action map_k(a) belongs to action a.
        if legal is not None:
            return self._single(features[rows[:, None], index[k]] * sign[k], self.sym_actions[k].gather(1, legal))
        logits, value = self._single(features[rows[:, None], index[k]] * sign[k])
        return logits.gather(1, self.sym_actions[k]), value

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[1]
