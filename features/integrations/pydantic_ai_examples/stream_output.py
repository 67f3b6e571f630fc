"""pydantic-ai's streamed structured output ("Streaming"): a TypedDict profile, partial then whole."""

from datetime import date
from typing import NotRequired

from _example_model import model
from pydantic_ai import Agent
from typing_extensions import TypedDict


class UserProfile(TypedDict):
    name: str
    dob: NotRequired[date]
    bio: NotRequired[str]


agent = Agent(
    model,
    output_type=UserProfile,
    instructions="Extract a user profile from the input",
)


async def main() -> None:
    user_input = "My name is Ben, I was born on January 28th 1990, I like the chain the dog and the pyramid."
    async with agent.run_stream(user_input) as result:
        async for profile in result.stream_output(debounce_by=None):
            print(sorted(profile))
