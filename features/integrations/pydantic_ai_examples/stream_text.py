"""pydantic-ai's streamed text ("Streaming"): run_stream's stream_text, the text as it grows, then its deltas."""

from _example_model import model
from pydantic_ai import Agent

agent = Agent(model)


async def main() -> None:
    async with agent.run_stream('Where does "hello world" come from?') as result:
        async for message in result.stream_text(debounce_by=None):
            print(message)
