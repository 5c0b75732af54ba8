"""The MCP tool server (:mod:`polarzoo.baselines.arena.mcp`): its tools as functions, and a whole
game played by the ``mcp`` SDK's own client over stdio, as an LLM client would."""

from __future__ import annotations

import json
import sys

import pytest

from polarzoo.baselines.arena.mcp import Games
from polarzoo.baselines.play.web_game import BadRequest


def test_a_game_through_the_tools() -> None:
    games = Games()
    assert {g["game"] for g in games.list_games()} >= {"fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"}
    agents = games.list_agents("fire_and_ice_v0")
    assert agents["members"] and all({"name", "spec", "rating"} <= set(m) for m in agents["members"])
    assert [m["rating"] for m in agents["members"]] == sorted((m["rating"] for m in agents["members"]), reverse=True)
    state = games.new_game("fire_and_ice_v0", "random", seat=1, seed=3)
    assert state["you"] == "ice" and state["your_turn"] and len(state["moves"]) == 1  # fire (random) moved first
    assert state["position"]["board"] and state["legal_moves"]
    first = state["legal_moves"][0]
    after = games.play(state["game_id"], first["notation"])
    assert after["moves"][1] == {"player": "ice", "notation": first["notation"]} and len(after["moves"]) == 3
    with pytest.raises(BadRequest, match="illegal"):
        games.play(state["game_id"], 0 if 0 not in {m["action"] for m in after["legal_moves"]} else 1)
    back = games.undo(state["game_id"])
    assert back["moves"] == state["moves"]
    over = games.resign(state["game_id"])
    assert over["over"] and over["result"] == "ice resigned" and not over["legal_moves"]
    with pytest.raises(BadRequest, match="over"):
        games.play(state["game_id"], first["notation"])
    with pytest.raises(BadRequest, match="no game"):
        games.get_state("nope")


@pytest.mark.parametrize(
    "call, words",
    [
        (("new_game", "chess_v0"), "unknown game"),
        (("new_game", "fire_and_ice_v0", "model:/etc/passwd"), "opponent"),
        (("new_game", "fire_and_ice_v0", "os:system"), "opponent"),
        (("new_game", "fire_and_ice_v0", "mcts:100000000"), "opponent"),
        (("new_game", "fire_and_ice_v0", "random", 5), "seat must be"),
        (("new_game", "thin_ice_v0", "random", 0, 0, 9), "players must be"),
        (("list_agents", "chess_v0"), "unknown game"),
    ],
)
def test_a_bad_call_is_one_line(call: tuple, words: str) -> None:
    """What a client names is data: no file, no module, capped budgets (the web app's rule)."""
    name, *args = call
    with pytest.raises(BadRequest, match=words) as caught:
        getattr(Games(), name)(*args)
    assert "\n" not in str(caught.value)


def test_a_thin_ice_table_with_one_agent_per_seat() -> None:
    state = Games().new_game("thin_ice_v0", "heuristic:1, random, heuristic:2", 1, 3, 4)
    assert state["opponents"] == {"player_0": "heuristic:1", "player_2": "random", "player_3": "heuristic:2"}
    assert state["you"] == "player_1"


def test_the_sdk_client_plays_a_whole_game_over_stdio() -> None:
    """The ``mcp`` SDK's ``Client`` starts ``python -m polarzoo.baselines.arena.mcp`` and plays Go
    with the Floe as White against random to the end, always the first legal move."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    async def play() -> tuple[list[str], dict, str]:
        parameters = StdioServerParameters(command=sys.executable, args=["-m", "polarzoo.baselines.arena.mcp"])
        async with Client(parameters) as client:
            from polarzoo import __version__

            assert client.server_info.name == "polarzoo" and client.server_info.version == __version__
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)

            async def call(name: str, **arguments: object) -> dict:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                return json.loads(result.content[0].text)

            state = await call("new_game", game="go_with_the_floe_v0", opponent="random", seed=1)
            # an action id as a JSON number, then the game's notation
            state = await call("play", game_id=state["game_id"], move=state["legal_moves"][0]["action"])
            for _ in range(200):
                if state["over"]:
                    break
                state = await call("play", game_id=state["game_id"], move=state["legal_moves"][0]["notation"])
            bad = await client.call_tool("play", {"game_id": state["game_id"], "move": "zz"})
            error = bad.content[0].text if bad.is_error else ""
        return tools, state, error

    tools, state, error = anyio.run(play)
    assert tools == ["get_state", "list_agents", "list_games", "new_game", "play", "resign", "undo"]
    assert state["over"] and state["result"] and len(state["moves"]) > 4
    assert "over" in error
