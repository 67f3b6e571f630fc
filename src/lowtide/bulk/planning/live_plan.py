"""A live run's dry run: what it would send and what that would take, at live prices and the configured limits.

Nothing is sent or written. Input tokens are estimated high (three bytes a token of what is sent, as the cost limit
counts them); the output's worst case is every item's `max_tokens`. The cost ranges from the input alone (at about
four bytes a token) to that worst case. The time is what the configured per-minute limits allow (requests, input,
output, and OpenAI's tokens together): the slowest of them, the output counted at its worst case. Limits not
configured are learned from the API's headers once calls start, so a plan without any gives no time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from lowtide.bulk.planning.converted import ConvertedFile, converted_json, converted_lines
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.run_reports import format_duration
from lowtide.cost.pricing import cost_range, estimate_input_tokens

if TYPE_CHECKING:
    from lowtide.bulk.running.definition import LiveRunDefinition, Prepared

__all__ = ["LivePlan", "live_plan"]


@dataclass
class LivePlan:
    run_id: str
    items_total: int
    already_final: int
    items: int = 0
    """Items it would call the API for."""
    input_tokens: int = 0
    output_tokens_max: int = 0
    cost_low_usd: Decimal | None = Decimal(0)
    cost_high_usd: Decimal | None = Decimal(0)
    """None when a model's price is unknown."""
    cost_limit_usd: Decimal | None = None
    not_run: int = 0
    """Items the cost limit would leave unsent (their worst case would cross it)."""
    limits: dict[str, int] = field(default_factory=dict[str, int])
    max_concurrency: int = 0
    seconds: float | None = None
    """The time the configured limits make it take; None when none is configured."""
    bound_by: str | None = None
    converted: list[ConvertedFile] = field(default_factory=list[ConvertedFile])
    """The files the run sends as the text they convert to."""
    unchecked: list[str] = field(default_factory=list[str])
    """What a dry run could not check without asking the API (`dry_checks`)."""

    def lines(self) -> list[str]:
        out = [
            f"run {self.run_id} (live): {self.items_total} item(s), {self.already_final} already answered,"
            f" {self.items} to call",
            f"  input tokens (estimated, high): {self.input_tokens:,};"
            f" output tokens at most: {self.output_tokens_max:,}",
        ]
        if self.cost_low_usd is None or self.cost_high_usd is None:
            out.append("  cost: unknown (no price is known for the model)")
        else:
            out.append(f"  cost at live prices: ${self.cost_low_usd:.6f} to ${self.cost_high_usd:.6f}")
        if self.cost_limit_usd is not None:
            out.append(f"  cost limit: ${self.cost_limit_usd}")
        if self.not_run:
            out.append(f"  {self.not_run} item(s) would not run: their worst case crosses the cost limit")
        limits = ", ".join(f"{name} {value:,}" for name, value in self.limits.items()) or "none configured"
        out.append(f"  limits: {limits}; at most {self.max_concurrency} call(s) in flight")
        if self.seconds is None:
            out.append("  expected time: unknown (no per-minute limit configured; the API's are learned as calls go)")
        else:
            out.append(f"  expected time: about {format_duration(self.seconds)} (bound by {self.bound_by})")
        out += converted_lines(self.converted, "  ")
        out += [f"  {note}" for note in self.unchecked]
        out.append("  nothing was sent")
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "mode": "live",
            "items_total": self.items_total,
            "already_final": self.already_final,
            "items": self.items,
            "input_tokens": self.input_tokens,
            "output_tokens_max": self.output_tokens_max,
            "cost_low_usd": self.cost_low_usd,
            "cost_high_usd": self.cost_high_usd,
            "cost_limit_usd": self.cost_limit_usd,
            "not_run": self.not_run,
            "limits": self.limits,
            "max_concurrency": self.max_concurrency,
            "expected_seconds": self.seconds,
            "bound_by": self.bound_by,
            "converted_files": converted_json(self.converted),
            "not_checked": self.unchecked,
        }


def live_plan(run: LiveRunDefinition, prepared: Prepared) -> LivePlan:
    """The plan of `run`'s items still to call."""
    configuration = run.actor.configuration
    live = configuration.live
    plan = LivePlan(
        run_id=prepared.run_id,
        items_total=len(run.jobs),
        already_final=len(run.jobs) - len(prepared.to_send),
        cost_limit_usd=run.max_cost_usd,
        max_concurrency=live.max_concurrency,
    )
    spent = prepared.spent
    for index in prepared.to_send:
        request = run.live_request(index, prepared.keys[index])
        sent = request.model_dump(mode="json", include={"system", "messages", "tools"})
        tokens = estimate_input_tokens(sent)
        estimate = cost_range(
            request.model,
            input_tokens=tokens,
            max_output_tokens=request.max_tokens,
            mode=BatchProcessingMode.LIVE,
            provider=configuration.provider,
        )
        high = estimate[1] if estimate is not None else Decimal(0)
        if run.max_cost_usd is not None and (plan.not_run or spent + high > run.max_cost_usd):
            plan.not_run += 1
            continue
        spent += high
        plan.items += 1
        plan.input_tokens += tokens
        plan.output_tokens_max += request.max_tokens
        if estimate is None:
            plan.cost_low_usd = plan.cost_high_usd = None
        elif plan.cost_low_usd is not None and plan.cost_high_usd is not None:
            plan.cost_low_usd += estimate[0]
            plan.cost_high_usd += estimate[1]
    needs = {
        "rpm": plan.items,
        "input_tpm": plan.input_tokens,
        "output_tpm": plan.output_tokens_max,
        "tpm": plan.input_tokens + plan.output_tokens_max,
    }
    for name, need in needs.items():
        limit = getattr(live, name)
        if limit is None:
            continue
        plan.limits[name] = limit
        seconds = need * 60.0 / limit
        if plan.seconds is None or seconds > plan.seconds:
            plan.seconds, plan.bound_by = seconds, name
    return plan
