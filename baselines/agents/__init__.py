"""Baseline agents for every environment.

An agent answers ``act(env, agent, rng) -> action`` where ``env`` is the *unwrapped* AEC env at
the moment ``agent`` must act, and ``rng`` a ``numpy.random.Generator`` for any randomness (so a
game replays from its seed).  Its legal moves are the nonzero entries of
``env.observe(agent)["action_mask"]`` (``np.flatnonzero(...)``: action ids; ``env.action_to_notation(a)``
names one); it may also read the observation (``env.observe(agent)["observation"]``) and, for
search, the rules state ``env.state`` with the pure rules module ``env.rules``.  It returns one
legal action id; an illegal one loses the game in evaluations and leagues.

* :class:`RandomAgent`: uniform over legal actions.
* :class:`FireAndIceHeuristic`: win now; never hand the opponent a win (checks its replies);
  otherwise build island control (islands held, then lines of two of ours with the third free).
* :class:`FloeHeuristic`: seals take an isolating move, keep away from bears and dig in next to
  rings; bears capture when they can, never allow an isolating reply they can see, and close in.
* :class:`ThinIceHeuristic`: calls the smallest single piece; places by trying a few random
  placements on a snapshot (the physics decides) and keeping the one that leaves the player in
  with the fewest pieces on the table, then the highest pile.
* :class:`ThinIceSearch`: a trained Thin Ice policy whose most probable placements are tried on a
  snapshot first: the first that keeps the player in (``search:K``), or the one whose pile the
  policy's critic values most (``vsearch:K``).
* :class:`FloeSearch`: a Go with the Floe policy whose White chooses captures by the endgame they
  leave and hunts the last seal by expectimax against a random seal (``search:D``).
* :class:`MCTSAgent`: UCT with random rollouts over the rules core (Fire & Ice, Go with the Floe).
* :class:`PolicyAgent`: a saved MaskablePPO model, acting greedily on its masked policy.

* :class:`~polarzoo.baselines.agents.alphazero.AlphaZeroAgent`: PUCT guided by a trained policy (``az:N``).

``make_agent(spec, env_id)`` builds one from a spec: ``random``, ``heuristic``, ``mcts:N``,
``model:PATH``, ``pretrained`` (the model shipped in the package for that env), ``az:N`` (PUCT with
N simulations guided by the pretrained model) or ``az:N:PATH`` (guided by a saved model), and for
Thin Ice ``search:K`` / ``search:K:PATH`` and ``vsearch:K`` / ``vsearch:K:PATH`` (the pretrained or a
saved policy with a K-placement physics look-ahead), for Go with the Floe ``search:D`` /
``search:D:PATH`` (the endgame searched D White moves deep).
"""

from polarzoo.baselines.agents.base import Agent, RandomAgent, legal_actions
from polarzoo.baselines.agents.fire_and_ice import FireAndIceHeuristic
from polarzoo.baselines.agents.floe_search import FloeSearch
from polarzoo.baselines.agents.go_with_the_floe import FloeHeuristic
from polarzoo.baselines.agents.mcts import MCTSAgent
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.agents.pretrained import PRETRAINED_DIR, SOLITAIRE_PRETRAINED, pretrained_az_jax_path, pretrained_path
from polarzoo.baselines.agents.registry import heuristic_class, make_agent
from polarzoo.baselines.agents.thin_ice import ThinIceHeuristic, ThinIceSearch, placement_score

__all__ = [
    "Agent",
    "RandomAgent",
    "legal_actions",
    "FireAndIceHeuristic",
    "FloeHeuristic",
    "FloeSearch",
    "ThinIceHeuristic",
    "ThinIceSearch",
    "placement_score",
    "MCTSAgent",
    "PolicyAgent",
    "heuristic_class",
    "PRETRAINED_DIR",
    "SOLITAIRE_PRETRAINED",
    "pretrained_az_jax_path",
    "pretrained_path",
    "make_agent",
]
