"""Go with the Floe: rules core (``rules``), AEC env with match play (``env``), renderers (``render``)."""

from polarzoo.envs.game_info import GameInfo

GAME = GameInfo(
    id="go_with_the_floe_v0",
    title="Go with the Floe",
    module="polarzoo.envs.go_with_the_floe_v0",
    notation_example="B2-C3 or G2xF3",
    rules="docs/rules/go_with_the_floe.md",
    pettingzoo_id="polarzoo/go_with_the_floe-v0",
    view="board",
    window=True,
    rules_core=True,
    batch_core=True,
    jax_twin="go_with_the_floe",
    openspiel="polarzoo_go_with_the_floe",
    kit="polarzoo.baselines.kits.go_with_the_floe:KIT",
)
