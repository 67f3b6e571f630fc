"""pydantic-ai's dice game ("Agents", "Function Tools"): a plain tool and one reading the run's deps."""

import random

from _example_model import model
from pydantic_ai import Agent, RunContext

agent = Agent(
    model,
    deps_type=str,
    instructions=(
        "You're a dice game, you should roll the die and see if the number "
        "you get back matches the user's guess. If so, tell them they're a winner. "
        "Use the player's name in the response."
    ),
)


@agent.tool_plain
def roll_dice() -> str:
    """Roll a six-sided die and return the result."""
    return str(random.randint(1, 6))


@agent.tool
def get_player_name(ctx: RunContext[str]) -> str:
    """Get the player's name."""
    return ctx.deps


async def main() -> None:
    dice_result = await agent.run("[[emulator:tool:get_player_name]] My guess is 4", deps="Anne")
    print(dice_result.output)
    print(
        [
            part.tool_name
            for message in dice_result.all_messages()
            for part in message.parts
            if part.part_kind == "tool-call"
        ]
    )
    print(
        [
            str(part.content)
            for message in dice_result.all_messages()
            for part in message.parts
            if part.part_kind == "tool-return"
        ]
    )
