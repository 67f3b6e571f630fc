"""What the dashboard's step modules share: a run as the Runs page's JSON shows it."""

from __future__ import annotations

from lowtide.dashboard.data import Json

__all__ = ["shown_run"]


def shown_run(page: Json, run_id: str) -> Json:
    """The run `run_id` on the Runs page `page` (what `DashboardData.runs` gave)."""
    runs = page["runs"]
    assert isinstance(runs, list)
    for run in runs:
        if isinstance(run, dict) and run.get("id") == run_id:
            return run
    raise AssertionError(f"no run {run_id} on the page")
