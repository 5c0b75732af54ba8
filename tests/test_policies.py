"""baselines.policies: shapes, masking, exact equivariance, save/load without the run folder."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from polarzoo.baselines.agents import RandomAgent  # noqa: E402
from polarzoo.baselines.policies import BoardPolicy, FireAndIceNet, FloeNet, MaskedCategorical  # noqa: E402
from polarzoo.envs.fire_and_ice import symmetry as fire_symmetry  # noqa: E402
from polarzoo.envs.go_with_the_floe import symmetry as floe_symmetry  # noqa: E402
from polarzoo.wrappers import SingleAgentEnv  # noqa: E402
from polarzoo.wrappers.single_agent import random_play_rows  # noqa: E402


def test_fire_and_ice_net_is_equivariant_under_collineations() -> None:
    torch.manual_seed(0)
    net = FireAndIceNet(9, dim=16, blocks=2)
    # Move the output layers away from their near-zero start so the test sees real logits.
    for layer in (net.query, net.key, net.pass_logit):
        torch.nn.init.normal_(layer.weight, std=0.5)
    x = torch.rand(3, 7, 7, 9)
    logits, value = net(x.flatten(1))
    assert logits.shape == (3, 2402) and value.shape == (3, 16)
    for k in (1, 169, 5000, 28_223):
        mapped = torch.from_numpy(fire_symmetry.transform_observation(x.numpy(), k))
        mapped_logits, mapped_value = net(mapped.flatten(1))
        expected = torch.from_numpy(fire_symmetry.transform_mask(logits.detach().numpy(), k))
        assert torch.allclose(mapped_logits, expected, atol=1e-5)
        assert torch.allclose(mapped_value, value, atol=1e-5)
    # Not invariant: a different board gives different logits.
    assert not torch.allclose(net(torch.rand(3, 441))[0], logits)


@pytest.mark.parametrize("symmetrize", [True, "canonical"])
def test_floe_net_is_equivariant_under_the_mirror(symmetrize: bool | str) -> None:
    torch.manual_seed(0)
    net = FloeNet(11, dim=8, blocks=1, symmetrize=symmetrize)
    torch.nn.init.normal_(net.move_logits.weight, std=0.5)
    x = (torch.rand(6, 8, 8, 11) < 0.3).float()
    logits, value = net(x.flatten(1))
    assert logits.shape == (6, 1025)
    mapped_logits, mapped_value = net(torch.from_numpy(floe_symmetry.transform_observation(x.numpy(), 1)).flatten(1))
    assert torch.allclose(mapped_logits, torch.from_numpy(floe_symmetry.transform_mask(logits.detach().numpy(), 1)), atol=1e-5)
    assert torch.allclose(mapped_value, value, atol=1e-5)


def test_floe_net_canonical_runs_once_and_differs_from_no_symmetry() -> None:
    torch.manual_seed(0)
    plain = FloeNet(11, dim=8, blocks=1, symmetrize=False)
    canonical = FloeNet(11, dim=8, blocks=1, symmetrize="canonical")
    canonical.load_state_dict(plain.state_dict())
    x = (torch.rand(64, 8, 8, 11) < 0.3).float()
    mirrored = torch.from_numpy(floe_symmetry.transform_observation(x.numpy(), 1))
    flat, flat_mirrored = x.flatten(1), mirrored.flatten(1)
    # Each board is either left as it is or replaced by its mirror image, about half each way.
    same = torch.isclose(canonical(flat)[1], plain(flat)[1], atol=1e-6).all(dim=1)
    assert torch.equal(same, ~torch.isclose(canonical(flat_mirrored)[1], plain(flat_mirrored)[1], atol=1e-6).all(dim=1))
    assert 10 < int(same.sum()) < 54
    with pytest.raises(ValueError, match="symmetrize must be"):
        FloeNet(11, symmetrize="sometimes")


@pytest.mark.parametrize("env_id,board", [("fire_and_ice_v0", "fire_and_ice"), ("go_with_the_floe_v0", "go_with_the_floe")])
def test_board_policy_trains_masks_and_reloads_from_anywhere(env_id: str, board: str, tmp_path) -> None:
    env = SingleAgentEnv(env_id, opponents=[RandomAgent()])
    model = MaskablePPO(
        BoardPolicy,
        env,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"board": board, "dim": 8, "blocks": 1},
    )
    model.learn(64)
    observation, info = env.reset(seed=3)
    for _ in range(20):
        action, _ = model.predict(observation, action_masks=env.action_masks())
        assert env.action_masks()[int(action)]
        observation, reward, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            observation, info = env.reset()
    path = tmp_path / "run" / "model.zip"
    model.save(path)
    # The saved file must not hold the env (or its opponents): load it elsewhere, run folder gone.
    moved = tmp_path / "elsewhere.zip"
    path.rename(moved)
    (tmp_path / "run").rmdir()
    code = (
        "import sys; from sb3_contrib import MaskablePPO; m = MaskablePPO.load(sys.argv[1], device='cpu'); "
        "print(type(m.policy).__name__, m.policy.board)"
    )
    other = tmp_path / "cwd"
    other.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", code, str(moved)], cwd=other, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""}
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["BoardPolicy", board]
    assert moved.stat().st_size < 5_000_000


@pytest.mark.parametrize("env_id,board", [("fire_and_ice_v0", "fire_and_ice"), ("go_with_the_floe_v0", "go_with_the_floe")])
def test_a_bfloat16_update_computes_the_float32_numbers_to_its_rounding_and_play_is_float32(
    env_id: str, board: str, tmp_path
) -> None:
    """``update_precision="bfloat16"``: with gradients on (the update, cloning) the same weights
    give the float32 network's logits and values to bfloat16's rounding (float32 out, gradients to
    every trunk weight); without them (rollouts, play) the float32 numbers to the bit; a weight
    file keeps the setting."""
    from polarzoo.baselines.policies.networks import native_bfloat16, update_dtype
    from polarzoo.baselines.policies.weights import load_policy, save_policy

    env = SingleAgentEnv(env_id, opponents=[RandomAgent()])
    kwargs = {"board": board, "dim": 16, "blocks": 2}
    plain = MaskablePPO(BoardPolicy, env, seed=0, device="cpu", policy_kwargs=kwargs).policy
    half = MaskablePPO(BoardPolicy, env, seed=0, device="cpu", policy_kwargs={**kwargs, "update_precision": "bfloat16"}).policy
    half.load_state_dict(plain.state_dict())
    features = torch.as_tensor(random_play_rows(env, 32, 1)[0])
    logits, value = plain.mlp_extractor(features)
    half_logits, half_value = half.mlp_extractor(features)
    assert half_logits.dtype == torch.float32 and half_value.dtype == torch.float32
    assert not torch.equal(half_logits, logits)  # it did round
    assert torch.allclose(half_logits, logits, atol=0.05) and torch.allclose(half_value, value, atol=0.05)
    (half_logits.sum() + half_value.sum()).backward()
    assert all(p.grad is not None for name, p in half.mlp_extractor.named_parameters() if "blocks" in name)
    with torch.no_grad():
        assert all(torch.equal(a, b) for a, b in zip(half.mlp_extractor(features), plain.mlp_extractor(features)))
    path = save_policy(half, tmp_path / "half.safetensors", env_id)
    assert load_policy(path).policy.mlp_extractor.autocast_dtype == torch.bfloat16
    # auto: bfloat16 where the CPU has it; the pile network has no bfloat16 trunk
    assert update_dtype("auto") == (torch.bfloat16 if native_bfloat16() else None) and update_dtype("float32") is None
    with pytest.raises(ValueError, match="update_precision must be one of"):
        update_dtype("float16")
    if importlib.util.find_spec("mujoco") is None:
        return
    thin_ice = SingleAgentEnv("thin_ice_v0", env_kwargs={"grid": 3})
    with pytest.raises(ValueError, match="no bfloat16 trunk"):
        BoardPolicy(
            thin_ice.observation_space, thin_ice.action_space, lambda _: 1e-3, board="thin_ice", update_precision="bfloat16"
        )


def test_board_policy_rejects_wrong_board() -> None:
    env = SingleAgentEnv("go_with_the_floe_v0")
    with pytest.raises(ValueError, match="logits"):
        MaskablePPO(BoardPolicy, env, policy_kwargs={"board": "fire_and_ice"}, device="cpu")
    with pytest.raises(ValueError, match="board must be one of"):
        MaskablePPO(BoardPolicy, env, policy_kwargs={"board": "chess"}, device="cpu")


def test_floe_reach_planes_match_the_rules_flood_fill() -> None:
    """FloeReach's planes are the rules' isolation-graph reach (rules.reach_bits / spread_bits),
    for both seats' views of positions from random games."""
    from polarzoo.baselines.policies.networks import FloeReach
    from polarzoo.envs.go_with_the_floe import rules as floe_rules
    from polarzoo.envs.go_with_the_floe.encoding import observation_tensor

    reach = FloeReach()
    rng = np.random.default_rng(0)

    def planes_of(bits: int) -> np.ndarray:
        return np.array([(bits >> q) & 1 for q in range(64)]).reshape(8, 8)

    def within(state: floe_rules.State, token: int, moves: int) -> int:
        rings = int(np.packbits(state.rings, bitorder="little").view("<u8")[0])
        bits = int(np.packbits(state.board == token, bitorder="little").view("<u8")[0])
        for _ in range(moves):
            bits = floe_rules.spread_bits(bits, floe_rules.ON_BOARD_BITS & ~rings, rings)
        return bits

    checked = 0
    for _ in range(25):
        state = floe_rules.initial_state()
        while state.winner < 0:
            for colour in (0, 1):
                obs = torch.tensor(observation_tensor(state, colour), dtype=torch.float32).permute(2, 0, 1)[None]
                planes = reach(obs)[0].numpy().astype(int)
                assert np.array_equal(planes[0], planes_of(within(state, floe_rules.BEAR, 1)))
                assert np.array_equal(planes[3], planes_of(within(state, floe_rules.BEAR, 4)))
                assert np.array_equal(planes[5], planes_of(floe_rules.reach_bits(state, floe_rules.BEAR)))
                assert np.array_equal(planes[6], planes_of(within(state, floe_rules.SEAL, 1)))
                assert np.array_equal(planes[9], planes_of(floe_rules.reach_bits(state, floe_rules.SEAL)))
                checked += 1
            floe_rules.apply_inplace(state, int(rng.choice(floe_rules.legal_actions(state))))
    assert checked > 300


def test_masked_categorical_matches_sb3_contrib_and_samples_only_legal_actions() -> None:
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    from polarzoo.baselines.policies import MaskedCategorical

    torch.manual_seed(0)
    logits = torch.randn(32, 2402)
    masks = torch.rand(32, 2402) < 0.03
    masks[:, 7] = True
    reference = MaskableCategorical(logits=logits, masks=masks)
    ours = MaskedCategorical(logits)
    ours.apply_masking(masks)
    actions = torch.multinomial(masks.float(), 1).squeeze(1)
    assert torch.allclose(ours.log_prob(actions), reference.log_prob(actions), atol=1e-5)
    assert torch.allclose(ours.entropy(), reference.entropy(), atol=1e-5)
    assert torch.allclose(ours.probs, reference.probs, atol=1e-6)
    samples = torch.stack([ours.sample() for _ in range(200)], dim=1)
    assert bool(masks.gather(1, samples).all())
    # Gumbel-max draws with the softmax's frequencies.
    small = MaskedCategorical(torch.tensor([[0.0, 1.0, 2.0, 5.0]]).repeat(40_000, 1))
    small.apply_masking(torch.tensor([[True, True, True, False]]).repeat(40_000, 1))
    frequencies = torch.bincount(small.sample(), minlength=4).float() / 40_000
    assert torch.allclose(frequencies, small.probs[0], atol=0.01) and frequencies[3] == 0
    # No mask: plain softmax.
    free = MaskedCategorical(logits)
    free.apply_masking(None)
    assert torch.allclose(free.probs, torch.softmax(logits, dim=-1), atol=1e-6)


def test_the_masked_categorical_computes_what_the_plain_one_did_to_the_bit() -> None:
    """The exponentials of the masked entries (-1e8) are skipped, not changed: log-probabilities,
    entropy, probabilities and the gradient to the raw logits equal the plain computation's
    (``logsumexp`` and ``exp`` over every entry) bit for bit."""
    from polarzoo.baselines.policies import MaskedCategorical

    torch.manual_seed(3)
    raw = torch.randn(64, 2402) * 3
    masks = torch.rand(64, 2402) < 0.02
    masks[:, 11] = True
    actions = torch.multinomial(masks.float(), 1).squeeze(1)

    def plain(logits: torch.Tensor) -> tuple[torch.Tensor, ...]:  # in MaskablePPO's order: log_prob, then entropy
        masked = torch.where(masks, logits, torch.tensor(-1e8))
        normalised = masked - masked.logsumexp(dim=-1, keepdim=True)
        log_prob = normalised.gather(-1, actions[:, None]).squeeze(-1)
        probs = normalised.exp()
        entropy = -torch.where(masks, normalised * probs, torch.zeros(())).sum(-1)
        return log_prob, entropy, probs

    def ours(logits: torch.Tensor) -> tuple[torch.Tensor, ...]:
        distribution = MaskedCategorical(logits)
        distribution.apply_masking(masks)
        return distribution.log_prob(actions), distribution.entropy(), distribution.probs

    results = []
    for compute in (plain, ours):
        logits = raw.clone().requires_grad_(True)
        log_prob, entropy, probs = compute(logits)
        (1.3 * log_prob.mean() + 0.01 * entropy.mean() + probs[:, 11].sum()).backward()
        results.append((log_prob.detach(), entropy.detach(), probs.detach(), logits.grad))
    assert all(torch.equal(a, b) for a, b in zip(*results))


@pytest.mark.parametrize(
    "env_id,board",
    [("fire_and_ice_v0", "fire_and_ice"), ("go_with_the_floe_v0", "go_with_the_floe"), ("thin_ice_v0", "thin_ice")],
)
def test_the_update_over_legal_actions_computes_what_the_full_distribution_does(env_id: str, board: str) -> None:
    """MaskablePPO's update reads values, log-probabilities and entropies from
    ``BoardPolicy.evaluate_actions``, computed over each row's legal actions only: the same numbers
    and gradients as sb3-contrib's full masked distribution, to rounding; an action that is not
    legal gets the masked logit's -1e8."""
    from polarzoo.baselines.policies.sb3 import legal_actions

    if board == "thin_ice":
        pytest.importorskip("mujoco")
    env = SingleAgentEnv(env_id, opponents=[RandomAgent()], env_kwargs={"grid": 3} if board == "thin_ice" else None)
    model = MaskablePPO(BoardPolicy, env, seed=0, device="cpu", policy_kwargs={"board": board, "dim": 16, "blocks": 2})
    observations, masks, actions = random_play_rows(env, 48, 5)
    obs, mask = torch.as_tensor(observations), torch.as_tensor(masks, dtype=torch.float32)
    taken = torch.as_tensor(actions)
    taken[0] = int(np.flatnonzero(masks[0] == 0)[0])  # not legal there
    policy = model.policy
    results = []
    for evaluate in (policy.evaluate_actions, super(BoardPolicy, policy).evaluate_actions):
        policy.zero_grad()
        values, log_prob, entropy = evaluate(obs, taken, mask)
        assert entropy is not None
        (values.sum() + log_prob[1:].sum() + 0.1 * entropy.sum()).backward()
        grads = [parameter.grad.clone() for parameter in policy.parameters() if parameter.grad is not None]
        results.append((values.detach(), log_prob.detach(), entropy.detach(), grads))
    (values, log_prob, entropy, grads), (values_full, log_prob_full, entropy_full, grads_full) = results
    assert float(log_prob[0]) == pytest.approx(-1e8, rel=1e-6) and float(log_prob_full[0]) < -1e7
    assert torch.allclose(values, values_full, atol=1e-5)
    assert torch.allclose(log_prob[1:], log_prob_full[1:], atol=1e-4)
    assert torch.allclose(entropy, entropy_full, atol=1e-4)
    assert len(grads) == len(grads_full) and all(torch.allclose(a, b, atol=1e-4) for a, b in zip(grads, grads_full))
    legal, valid = legal_actions(mask, mask.shape[1])
    assert valid.sum(1).tolist() == (mask != 0).sum(1).tolist()
    assert all(set(legal[row][valid[row]].tolist()) == set(np.flatnonzero(masks[row]).tolist()) for row in range(len(masks)))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int8])
def test_legal_actions_packs_each_rows_legal_ids_to_the_left_whatever_the_masks_dtype(dtype: torch.dtype) -> None:
    """By hand: a row with three legal actions, a row with none (all padding), a row with one;
    and a batch of no rows."""
    from polarzoo.baselines.policies.sb3 import legal_actions

    masks = torch.tensor([[0, 1, 0, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]]).to(dtype)
    legal, valid = legal_actions(masks, 5)
    assert legal.tolist() == [[1, 3, 4], [0, 0, 0], [0, 0, 0]]
    assert valid.tolist() == [[True, True, True], [False, False, False], [True, False, False]]
    # a flat mask of several rows reads the same
    assert torch.equal(legal_actions(masks.reshape(-1), 5)[0], legal)
    legal, valid = legal_actions(torch.zeros((0, 5), dtype=dtype), 5)
    assert legal.shape == valid.shape == (0, 1)


def test_legal_actions_in_buckets_give_one_calls_numbers_with_narrower_rows() -> None:
    """Rows grouped by their number of legal actions, each group padded to its own widest row:
    the logits and latents of one call over all rows, in the rows' order, and the gradient too."""
    from polarzoo.baselines.policies.sb3 import forward_legal_in_buckets, legal_actions

    rng = np.random.default_rng(0)
    counts = rng.choice([1, 3, 40, 41, 90], size=37)
    masks = torch.zeros(37, 100, dtype=torch.bool)
    for row, count in enumerate(counts):
        masks[row, rng.choice(100, size=count, replace=False)] = True
    legal, valid = legal_actions(masks, 100)
    weights = torch.randn(100, 5, requires_grad=True)
    features = torch.randn(37, 5)
    widths: list[int] = []

    def forward_legal(rows: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        widths.append(actions.shape[1])
        return (rows[:, None, :] * weights[actions]).sum(-1), rows * 2

    one_logits, one_latent = forward_legal(features, legal)
    (grad_one,) = torch.autograd.grad(one_logits.masked_fill(~valid, 0).sum(), weights)
    widths.clear()
    logits, latent = forward_legal_in_buckets(forward_legal, features, legal, valid, 4)
    (grad,) = torch.autograd.grad(logits.masked_fill(~valid, 0).sum(), weights)
    assert logits.shape == legal.shape and torch.equal(latent, one_latent)
    assert torch.allclose(logits[valid], one_logits[valid], atol=1e-6) and torch.allclose(grad, grad_one, atol=1e-5)
    assert len(widths) == 4 and widths == sorted(widths) and widths[0] < 90 and widths[-1] == 90
    # a batch too small to split is one call
    widths.clear()
    forward_legal_in_buckets(forward_legal, features[:5], legal[:5], valid[:5], 4)
    assert len(widths) == 1


# ------------------------------------------------------------------------------ Thin Ice
def _thin_ice_observations(num_players: int, steps: int = 14, seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    pytest.importorskip("mujoco")
    from polarzoo.envs import thin_ice_v0

    env = thin_ice_v0.raw_env(num_players=num_players)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    for _ in range(steps):
        if env.terminations[env.agent_selection]:
            break
        observation = env.observe(env.agent_selection)
        observations.append(observation["observation"])
        masks.append(observation["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return np.array(observations), np.array(masks), env.grid


@pytest.mark.parametrize("num_players", [2, 5])
def test_thin_ice_net_shapes_masks_and_any_number_of_players(num_players: int) -> None:
    from polarzoo.baselines.policies.networks import ThinIceNet

    observations, masks, grid = _thin_ice_observations(num_players)
    net = ThinIceNet(observations.shape[1], masks.shape[1], dim=16, blocks=1)
    logits, value = net(torch.as_tensor(observations))
    assert logits.shape == (len(observations), masks.shape[1]) and value.shape == (len(observations), 16)
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()
    distribution = MaskedCategorical(logits)
    distribution.apply_masking(torch.as_tensor(masks, dtype=torch.bool))
    for _ in range(5):
        sample = distribution.sample()
        assert torch.as_tensor(masks)[torch.arange(len(masks)), sample].all()
    # the same network reads games of every other size (the pile and player encoders are shared)
    for players in range(2, 7):
        other, other_masks, _ = _thin_ice_observations(players, steps=4)
        other_logits, _ = net(torch.as_tensor(other))
        assert other_logits.shape == (len(other), masks.shape[1]) and torch.isfinite(other_logits).all()
    with pytest.raises(ValueError, match="not a Thin Ice observation"):
        net(torch.zeros(1, 100))


def test_thin_ice_net_reads_padded_observations_as_the_unpadded_ones() -> None:
    """A trainer of several player counts pads every observation to the largest game's layout
    (absent seats); the pile network drops them again: the same logits and value, row by row,
    in a batch that mixes the counts, and the gradient reaches the weights through it."""
    from polarzoo.baselines.policies.networks import ThinIceNet
    from polarzoo.envs.thin_ice import rules as thin_rules

    games = [_thin_ice_observations(players, steps=6, seed=players)[0] for players in (2, 3, 4, 6)]
    torch.manual_seed(0)
    net = ThinIceNet(thin_rules.observation_size(6), 907, dim=16, blocks=1)
    padded = np.concatenate([np.stack([thin_rules.pad_observation(o, 6) for o in game]) for game in games])
    logits, value = net(torch.as_tensor(padded))
    row = 0
    for game in games:
        own_logits, own_value = net(torch.as_tensor(game))
        assert torch.allclose(logits[row : row + len(game)], own_logits, atol=1e-5)
        assert torch.allclose(value[row : row + len(game)], own_value, atol=1e-5)
        row += len(game)
    (logits.sum() + value.sum()).backward()
    assert net.token[0].weight.grad is not None and net.token[0].weight.grad.abs().sum() > 0
    # the update's path (the logits of a few actions a row) reads them the same way
    legal = torch.as_tensor(np.random.default_rng(1).integers(0, 907, size=(len(padded), 40)))
    legal_logits, legal_value = net.forward_legal(torch.as_tensor(padded), legal)
    assert torch.allclose(legal_logits, logits.gather(1, legal), atol=1e-5) and torch.allclose(legal_value, value, atol=1e-5)


def test_thin_ice_net_canonical_is_invariant_and_equivariant_under_the_square() -> None:
    from polarzoo.baselines.policies.networks import ThinIceNet
    from polarzoo.envs.thin_ice import symmetry

    observations, masks, grid = _thin_ice_observations(2, steps=30, seed=3)
    # the empty pile is its own image under every map (a tie): keep piles with a piece in them
    has_piece = observations[:, 0 : 15 * 12 : 12].sum(axis=1) > 0
    observations = observations[has_piece]
    assert len(observations) >= 5
    torch.manual_seed(0)
    net = ThinIceNet(observations.shape[1], masks.shape[1], dim=16, blocks=1)
    plain = ThinIceNet(observations.shape[1], masks.shape[1], dim=16, blocks=1, symmetrize="none")
    plain.load_state_dict(net.state_dict())
    logits, value = net(torch.as_tensor(observations))
    differs = False
    for k in range(symmetry.NUM_SYMMETRIES):
        image = torch.as_tensor(symmetry.transform_observation(observations, k, 2))
        mapped_logits, mapped_value = net(image)
        actions = torch.as_tensor(np.array(symmetry.action_map(k, grid)))
        assert torch.allclose(mapped_value, value, atol=1e-5)
        assert torch.allclose(mapped_logits[:, actions], logits, atol=1e-4)
        differs |= not torch.allclose(plain(image)[0][:, actions], plain(torch.as_tensor(observations))[0], atol=1e-4)
    assert differs  # without the canonical orientation the same weights are not equivariant
    # forward_legal: the logits of listed actions only (each kind: calls, placements of every size,
    # pick-ups, DONE), through the canonical orientation and without it
    legal = torch.as_tensor(np.random.default_rng(2).integers(0, masks.shape[1], size=(len(observations), 60)))
    legal[:, :4] = torch.tensor([0, 8, masks.shape[1] - 16, masks.shape[1] - 1])
    for network in (net, plain):
        full_logits, full_value = network(torch.as_tensor(observations))
        legal_logits, legal_value = network.forward_legal(torch.as_tensor(observations), legal)
        assert torch.allclose(legal_logits, full_logits.gather(1, legal), atol=1e-5)
        assert torch.allclose(legal_value, full_value, atol=1e-6)
    with pytest.raises(ValueError, match="symmetrize must be"):
        ThinIceNet(observations.shape[1], masks.shape[1], symmetrize="average")


def test_thin_ice_board_policy_trains_and_reloads(tmp_path) -> None:
    pytest.importorskip("mujoco")
    env = SingleAgentEnv("thin_ice_v0", opponents=[RandomAgent()], env_kwargs={"grid": 3})
    model = MaskablePPO(
        BoardPolicy,
        env,
        n_steps=32,
        batch_size=16,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"board": "thin_ice", "dim": 8, "blocks": 1},
    )
    model.learn(32)
    path = tmp_path / "thin.zip"
    model.save(path)
    loaded = MaskablePPO.load(path, device="cpu")
    assert loaded.policy.board == "thin_ice" and loaded.policy.pitch_mm == 7.0
    observation, _ = env.reset(seed=1)
    action, _ = loaded.predict(observation, action_masks=env.action_masks())
    assert env.action_masks()[int(action)]


def test_greedy_ties_go_to_the_lowest_action() -> None:
    from polarzoo.baselines.agents.policy import greedy_action

    assert greedy_action(np.array([0.1, 0.3, 0.3 * (1 - 1e-6), 0.3])) == 1
    assert greedy_action(np.array([0.0, 0.2, 0.5, 0.3])) == 2
    assert greedy_action(np.array([0.4, 0.39, 0.21])) == 0


def test_a_greedy_board_policy_plays_the_same_moves_on_any_number_of_threads() -> None:
    """Symmetric moves tie exactly in the equivariant network; float rounding that depends on
    the thread count used to pick among them (about one position in ten)."""
    from polarzoo.baselines.agents import make_agent
    from polarzoo.envs import fire_and_ice_v0

    agent = make_agent("pretrained", "fire_and_ice_v0")
    rng = np.random.default_rng(0)
    positions = []
    while len(positions) < 80:
        env = fire_and_ice_v0.raw_env()
        env.reset(seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(0, 24))):
            if env.state.winner >= 0:
                break
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        if env.state.winner < 0:
            positions.append(env)
    before = torch.get_num_threads()
    try:
        moves = []
        for threads in (1, 2):
            torch.set_num_threads(threads)
            moves.append([agent.act(env, env.agent_selection, np.random.default_rng(0)) for env in positions])
    finally:
        torch.set_num_threads(before)
    assert moves[0] == moves[1]
