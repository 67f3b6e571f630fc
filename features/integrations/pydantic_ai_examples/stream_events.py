"""pydantic-ai's run_stream_events ("Streaming all events"): every event of a run with a tool, then its result."""

from _example_model import model
from pydantic_ai import Agent, AgentRunResultEvent

agent = Agent(model, instructions="Answer with the weather the tool gives.")


@agent.tool_plain
def weather_forecast(location: str) -> str:
    """Forecast the weather for a location."""
    return f"The forecast in {location} is 24°C and sunny."


async def main() -> None:
    prompt = "[[emulator:tool:weather_forecast]] What will the weather be like in Paris?"
    async with agent.run_stream_events(prompt) as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                print("result:", event.result.output)
            else:
                print(event.event_kind)
