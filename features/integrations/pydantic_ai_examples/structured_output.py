"""pydantic-ai's structured output ("Output"): the answer as a Pydantic model, through an output tool."""

from _example_model import model
from pydantic import BaseModel
from pydantic_ai import Agent


class CityLocation(BaseModel):
    city: str
    country: str


agent = Agent(model, output_type=CityLocation)


async def main() -> None:
    result = await agent.run("Where were the olympics held in 2012?")
    print(type(result.output).__name__, bool(result.output.city), bool(result.output.country))
    print(result.usage().requests)
