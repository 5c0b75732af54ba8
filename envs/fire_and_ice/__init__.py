"""Fire & Ice: rules core (``rules``), AEC env (``env``), renderers (``render``)."""

from polarzoo.envs.game_info import GameInfo

GAME = GameInfo(
    id="fire_and_ice_v0",
    title="Fire & Ice",
    module="polarzoo.envs.fire_and_ice_v0",
    notation_example="D4-A4",
    rules="docs/rules/fire_and_ice.md",
    pettingzoo_id="polarzoo/fire_and_ice-v0",
    view="board",
    window=True,
    rules_core=True,
    batch_core=True,
    jax_twin="fire_and_ice",
    openspiel="polarzoo_fire_and_ice",
    kit="polarzoo.baselines.kits.fire_and_ice:KIT",
)
