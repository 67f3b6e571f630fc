"""pydantic-ai's first example ("Agents"): a one-sentence answer, run_sync's async twin."""

from _example_model import model
from pydantic_ai import Agent

agent = Agent(model, instructions="Be concise, reply with one sentence.")


async def main() -> None:
    result = await agent.run('Where does "hello world" come from?')
    print(result.output)
