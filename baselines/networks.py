"""Networks that know the boards (pure PyTorch; used by the SB3 policy in
:mod:`polarzoo.baselines.policies` and the RLlib module in :mod:`polarzoo.baselines.rllib_train`).

* :class:`FireAndIceNet`: one embedding per hole (49 tokens), mixed along the game's structure
  (position lines inside each island, island lines at each position, the island, the position,
  the board), with no per-hole weights, so it is equivariant under all 28,224 collineation maps
  of :mod:`polarzoo.envs.fire_and_ice.symmetry`.  Move logits are bilinear in the two holes'
  embeddings; PASS and the value latent come from the pooled board.
* :class:`FloeNet`: residual 3x3 convolutions over the 8x8 squares, 16 logits per square
  (direction x distance), averaged over the row mirror so that it is exactly equivariant.

Both read the flat observation (any float scale) and return ``(logits, value_latent)``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from polarzoo.envs.fire_and_ice import rules as fire_rules
from polarzoo.envs.go_with_the_floe import rules as floe_rules
from polarzoo.envs.go_with_the_floe import symmetry as floe_symmetry


def _set_matrices() -> tuple[torch.Tensor, torch.Tensor]:
    """The sets a Fire & Ice block mixes over, as a (113 sets, 49 holes) matrix and its 0/1
    transpose that sends each set's message back to its holes.  Rows: the 49 position lines
    (7 per island, sums: island control), the 49 island lines (7 per position, sums: victory),
    the 7 islands and the 7 positions (means: where a peg can move), the board (mean)."""
    n, lines = fire_rules.NUM_POSITIONS, fire_rules.LINES
    rows = []
    for island in range(n):
        for line in lines:
            row = np.zeros(fire_rules.NUM_HOLES, dtype=np.float32)
            row[n * island + line] = 1.0
            rows.append(row)
    for line in lines:
        for position in range(n):
            row = np.zeros(fire_rules.NUM_HOLES, dtype=np.float32)
            row[n * line + position] = 1.0
            rows.append(row)
    for island in range(n):
        row = np.zeros(fire_rules.NUM_HOLES, dtype=np.float32)
        row[n * island: n * island + n] = 1.0 / n
        rows.append(row)
    for position in range(n):
        row = np.zeros(fire_rules.NUM_HOLES, dtype=np.float32)
        row[position::n] = 1.0 / n
        rows.append(row)
    rows.append(np.full(fire_rules.NUM_HOLES, 1.0 / fire_rules.NUM_HOLES, dtype=np.float32))
    gather = torch.from_numpy(np.stack(rows))
    return gather, (gather > 0).float().T.contiguous()


#: slices of the set rows: position lines, island lines, islands, positions, board
_SETS = (slice(0, 49), slice(49, 98), slice(98, 105), slice(105, 112), slice(112, 113))


class FanoBlock(nn.Module):
    """One residual mixing step over the 49 hole embeddings.

    Each set (a line, an island, a position, the board) is summed or averaged first (one matrix
    product), transformed once per set with weights shared by all sets of its kind, then sent
    back to its holes (a second matrix product); no weight belongs to a particular hole."""

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

    def forward(self, h: torch.Tensor, gather: torch.Tensor, scatter: torch.Tensor) -> torch.Tensor:  # h: (B, 49, d)
        sets = torch.matmul(gather, h)  # (B, 113, d)
        position_lines, island_lines, islands, positions, board = (sets[:, part] for part in _SETS)
        messages = torch.cat([torch.relu(self.position_lines(position_lines)),  # island control
                              torch.relu(self.island_lines(island_lines)),  # three islands in a line win
                              self.island(islands), self.position(positions), self.board(board)], dim=1)
        update = self.hole(h) + torch.matmul(scatter, messages)
        return self.norm(h + self.out(torch.relu(update)))


class FireAndIceNet(nn.Module):
    """Hole tokens -> (action logits, value latent); see the module docstring."""

    def __init__(self, channels: int, dim: int = 32, blocks: int = 3, pass_action: bool = True) -> None:
        super().__init__()
        self.channels, self.dim, self.pass_action = channels, dim, pass_action
        gather, scatter = _set_matrices()
        self.register_buffer("gather", gather, persistent=False)
        self.register_buffer("scatter", scatter, persistent=False)
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
        h = self.embed(features.reshape(-1, fire_rules.NUM_HOLES, self.channels))  # hole = 7 * island + position
        for block in self.blocks:
            h = block(h, self.gather, self.scatter)
        return h

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
    observation with the rules' own :func:`~polarzoo.envs.go_with_the_floe.rules.spread_bits` on
    int64 bitboards, so the network sees what the game's end test sees:

    * squares a bear can reach in at most 1, 2, 3, 4 and 6 moves, and at all;
    * squares a seal can reach in at most 1, 2 and 3 moves, and at all.

    Read from the observation's channels (mine, opponent's, holes, ice, "I play White"), so the
    planes are the same for either seat's view and commute with the row mirror.  No gradient
    flows through them.
    """

    BEAR_STEPS = (1, 2, 3, 4, 6)
    SEAL_STEPS = (1, 2, 3)
    ITERATIONS = 52  # "at all": the flood stops growing long before (checked each move)
    num_planes = len(BEAR_STEPS) + len(SEAL_STEPS) + 2
    _LOW63 = (1 << 63) - 1

    def __init__(self) -> None:
        super().__init__()
        # Water squares (H8 = bit 63 among them) pack as 0: the flood never enters them, and an
        # int64 holds no bit 63.
        powers = torch.tensor([1 << q if floe_rules.ON_BOARD[q] else 0 for q in range(floe_rules.NUM_SQUARES)], dtype=torch.int64)
        self.register_buffer("powers", powers, persistent=False)
        self.register_buffer("shifts", torch.arange(floe_rules.NUM_SQUARES, dtype=torch.int64), persistent=False)
        self.not_file_a = floe_rules.NOT_FILE_A_BITS & self._LOW63
        self.not_file_h = floe_rules.NOT_FILE_H_BITS & self._LOW63

    def _pack(self, plane: torch.Tensor) -> torch.Tensor:  # (B, 8, 8) -> (B,) int64 bitboards
        return ((plane.flatten(1) > 0).long() * self.powers).sum(dim=1)

    def _unpack(self, bits: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:  # (B,) -> (B, 8, 8)
        return ((bits[:, None] >> self.shifts) & 1).to(dtype).view(-1, floe_rules.SIZE, floe_rules.SIZE)

    @torch.no_grad()
    def forward(self, board: torch.Tensor) -> torch.Tensor:  # (B, C, 8, 8) -> (B, planes, 8, 8)
        mine, theirs, rings, ice = (self._pack(board[:, i]) for i in range(4))
        white = board[:, 4].amax(dim=(1, 2)) > 0
        bears, seals = torch.where(white, mine, theirs), torch.where(white, theirs, mine)
        nodes = ice & ~rings
        planes = []
        for reach, marks in ((bears, self.BEAR_STEPS), (seals, self.SEAL_STEPS)):
            for step in range(1, self.ITERATIONS + 1):
                grown = floe_rules.spread_bits(reach, nodes, rings, self.not_file_a, self.not_file_h)
                if step in marks:
                    planes.append(grown)
                elif step > marks[-1] and torch.equal(grown, reach):
                    break  # stopped growing everywhere
                reach = grown
            planes.append(reach)
        return torch.stack([self._unpack(bits, board.dtype) for bits in planes], dim=1)


class FloeNet(nn.Module):
    """8x8 squares (the observation plus :class:`FloeReach` planes) -> (action logits, value
    latent), residual 3x3 convolutions with global pooling, averaged over the row mirror."""

    def __init__(self, channels: int, dim: int = 32, blocks: int = 2, symmetrize: bool = True) -> None:
        super().__init__()
        self.channels, self.symmetrize = channels, symmetrize
        self.reach = FloeReach()
        self.stem = nn.Sequential(nn.Conv2d(channels + FloeReach.num_planes, dim, 3, padding=1), nn.ReLU())
        self.blocks = nn.Sequential(*(_ResidualConv(dim) for _ in range(blocks)))
        self.move_logits = nn.Conv2d(dim, floe_rules.ACTIONS_PER_SQUARE, 1)
        self.pass_logit = nn.Linear(2 * dim, 1)
        self.value_latent = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU())
        for layer in (self.move_logits, self.pass_logit):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)
        self.register_buffer("mirror_actions", torch.as_tensor(np.array(floe_symmetry.action_map(1))), persistent=False)
        self.latent_dim_pi = floe_rules.NUM_ACTIONS
        self.latent_dim_vf = dim

    def _single(self, board: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # board: (B, C, 8 rows, 8 cols)
        h = self.blocks(self.stem(board))
        # (B, 16, 8, 8) -> (B, 64 squares, 16) with square = 8 * row + col: action = 16 * square + k.
        moves = self.move_logits(h).permute(0, 2, 3, 1).flatten(1)
        pooled = torch.cat([h.mean(dim=(2, 3)), h.amax(dim=(2, 3))], dim=-1)
        return torch.cat([moves, self.pass_logit(pooled)], dim=-1), self.value_latent(pooled)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        board = features.reshape(-1, floe_rules.SIZE, floe_rules.SIZE, self.channels).permute(0, 3, 1, 2)
        board = torch.cat([board, self.reach(board)], dim=1)  # the reach of the mirror is the mirrored reach
        logits, value = self._single(board)
        if not self.symmetrize:
            return logits, value
        mirrored_logits, mirrored_value = self._single(board.flip(2))
        # The mirrored board's logit for action a belongs to action mirror(a) of the real board.
        back = torch.empty_like(mirrored_logits)
        back[:, self.mirror_actions] = mirrored_logits
        return 0.5 * (logits + back), 0.5 * (value + mirrored_value)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward(features)[1]


#: The boards a network exists for (the solitaire uses the Fire & Ice network without PASS).
BOARDS = ("fire_and_ice", "fire_and_ice_solitaire", "go_with_the_floe")


def build_network(board: str, observation_size: int, dim: int = 32, blocks: int = 3, symmetrize: bool = True) -> nn.Module:
    """The network for ``board`` reading flat observations of ``observation_size`` numbers."""
    if board not in BOARDS:
        raise ValueError(f"board must be one of {BOARDS}, got {board!r}")
    if board == "go_with_the_floe":
        return FloeNet(observation_size // floe_rules.NUM_SQUARES, dim, blocks, symmetrize)
    return FireAndIceNet(observation_size // fire_rules.NUM_HOLES, dim, blocks, pass_action=board == "fire_and_ice")


def board_for_env(env_id: str) -> str:
    """The ``board`` of an env id (``BoardPolicy(board=...)``, :func:`build_network`)."""
    table = {"fire_and_ice_v0": "fire_and_ice", "go_with_the_floe_v0": "go_with_the_floe",
             "polarzoo/FireAndIceSolitaire-v0": "fire_and_ice_solitaire"}
    if env_id not in table:
        raise ValueError(f"no board policy for {env_id}; known: {sorted(table)} (use policy: mlp)")
    return table[env_id]
