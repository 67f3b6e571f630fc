"""The random-kill soak: batch-mode clients SIGKILLed at random moments, over several batches of the same size, then
every group of keys run to completion, and the API itself asked whether anything was created twice or lost.

Each round is drawn from `random.Random(f"{seed}:{round}")`, so a failing round replays with the same seed and
round number (`robot --variable SEED:... --variable FIRST_ROUND:... --variable ROUNDS:1`). One emulator serves every
round (reset between rounds); each round has its own ledger and its own keys.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from robot.api import logger
from robot.api.deco import keyword, library

from _crash_providers import _PROVIDERS, API_KEY, REPLY
from _custom_ids import key_of, keys_created
from _sdk_audits import AUDITS, created_ids
from CrashLibrary import CrashLibrary

# The route of each API's create where it is not `<prefix>batches.create` (Fireworks' creates a batch inference job).
_CREATE_ROUTES = {"fireworks": "fireworks.batch_jobs.create"}
# Seconds a finishing client may take before it counts as a hang (its batches take about a second each).
_FINISH_TIMEOUT = 120.0
_END_TIMEOUT = 60.0


@dataclass
class Totals:
    rounds: int = 0
    kills: int = 0
    clients: int = 0
    batches: int = 0
    requests: int = 0
    unknown_creates: int = 0
    double_creates: int = 0
    lost_answers: int = 0
    hangs: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list[str])


@library(scope="SUITE", auto_keywords=False)
class SoakLibrary(CrashLibrary):
    """`Run Soak` drives the rounds; the crash suite's keywords start the emulator and the clients."""

    def __init__(self) -> None:
        super().__init__()
        self._totals = Totals()

    @keyword("Run Soak")
    def run_soak(
        self, rounds: int, seed: str, first_round: int = 1, processes: int = 1, provider: str = "anthropic"
    ) -> dict[str, Any]:
        """`rounds` rounds from `first_round`, each with `processes` clients of `provider`'s batch API on one ledger
        at once (each with keys of its own, in batches of the same size as the others'); fails at the first round that
        double-created a request, lost an answer or hung, naming the seed and round that replay it."""
        self.use_provider(provider)
        totals = self._totals = Totals()
        started = time.monotonic()
        for number in range(int(first_round), int(first_round) + int(rounds)):
            self.reset_emulator()
            rng = random.Random(f"{seed}:{number}:{processes}" + ("" if provider == "anthropic" else f":{provider}"))
            try:
                self._round(rng, f"s{number}", int(processes))
            except AssertionError as exc:
                raise self._failed("Soak", number, seed, f"{processes} process(es), {provider}", exc) from None
            finally:
                self.stop_clients()
            totals.rounds += 1
        totals.seconds = time.monotonic() - started
        summary = {k: v for k, v in vars(totals).items() if k != "failures"}
        described = f"seed {seed!r}, {processes} process(es), {provider}"
        logger.info(f"Soak of {rounds} round(s), {described}: {summary}", also_console=True)
        return summary

    def _round(self, rng: random.Random, prefix: str, processes: int) -> None:
        totals = self._totals
        size = rng.randint(4, 25)
        groups = [f"{prefix}p{i}" for i in range(processes)]
        requests = size * 3  # three batches of the same size per client: same-size intents overlap
        ledger = self.new_ledger()
        self._arm_creates(rng)
        if rng.random() < 0.5:
            self.arm_fault(_PROVIDERS[self._provider].results_route, "slow", seconds=0.002)
        kills = rng.choice((0, 1, 1, 2, 3))
        for _ in range(kills):
            # Who dies is drawn before the clients start, so that they run unmeasured by coverage (SIGKILL leaves
            # none to write: `UNMEASURED`). The same draws as when they followed the pause's: the random stream
            # after them, and so every later draw of the round, is the same.
            dies = [rng.random() < 0.8 for _ in groups]
            dies[0] = dies[0] or not any(dies)
            pause = rng.uniform(0.05, 3.5)
            names = [
                self._client_for(group, requests, ledger, size, measured=not dead)
                for group, dead in zip(groups, dies, strict=True)
            ]
            time.sleep(pause)
            doomed = [name for name, dead in zip(names, dies, strict=True) if dead]
            for name in doomed:
                self._process_client(name).popen.send_signal(signal.SIGKILL)
                totals.kills += 1
            for name in names:
                self.wait_for_client(name, timeout=_FINISH_TIMEOUT)
            self._arm_creates(rng)
        finishers = [self._client_for(group, requests, ledger, size) for group in groups]
        for name in finishers:
            code = self._wait_or_hang(name)
            if code != 0:
                self.client_should_have_succeeded(name)
        for name, group in zip(finishers, groups, strict=True):
            self._answers_complete(name, group, requests)
        self._created_once(groups, requests)

    def _failed(
        self, soak: str, number: int, seed: str, variant: str, exc: AssertionError, more: str = ""
    ) -> AssertionError:
        """Round `number` of a soak failed: counted, diagnosed, and the error that says so, naming the seed and round
        that replay it, then `more`."""
        self._totals.failures.append(f"round {number}: {exc}")
        self.log_diagnostics()
        return AssertionError(
            f"{soak} round {number} (seed {seed!r}, {variant}) failed; replay it with --variable SEED:{seed}"
            f" --variable FIRST_ROUND:{number} --variable ROUNDS:1.\n{exc}{more}"
        )

    def _arm_creates(
        self, rng: random.Random, provider: str | None = None, delays: tuple[float, float] = (0.1, 0.8)
    ) -> None:
        """Now and then the next create (of `provider`'s API, by default the suite's) fails with an unknown outcome
        (a 500 before it commits, or its answer dropped after it did); the creates after it answer late (`delays`:
        the range of seconds drawn), so that creates are in flight while others reconcile. (The emulator queues
        after-commit faults in order.)"""
        name = provider or self._provider
        create = _CREATE_ROUTES.get(name, _PROVIDERS[name].fault_prefix + "batches.create")
        draw = rng.random()
        if draw < 0.35:
            self.arm_fault(create, "status", times=1, status=500)
            self._totals.unknown_creates += 1
        elif draw < 0.6:
            self.arm_fault(create, "drop_after_commit", times=1)
            self._totals.unknown_creates += 1
        self.arm_fault(create, "delay_after_commit", seconds=round(rng.uniform(*delays), 2), times=12)

    def _client_for(self, group: str, requests: int, ledger: str, size: int, measured: bool = True) -> str:
        self._totals.clients += 1
        return self.start_client(
            group, requests, ledger, max_batch_requests=size, reconcile_grace=5.0, measured=measured
        )

    def _wait_or_hang(self, name: str, timeout: float = _FINISH_TIMEOUT) -> int:
        try:
            return self.wait_for_client(name, timeout=timeout)
        except AssertionError:
            self._totals.hangs += 1
            raise

    def _answers_complete(self, name: str, group: str, requests: int) -> None:
        try:
            self.answers_should_be_complete(name, group, requests)
        except AssertionError:
            self._totals.lost_answers += 1
            raise

    def _created_once(self, groups: list[str], requests: int) -> None:
        """Through the provider's official SDK (`_sdk_audits.py`): every batch listed, every one waited for, every
        result read; each custom id of every group in exactly one batch's results. Then the emulator's own count
        agrees."""
        batches = AUDITS[self._provider](self._require_base_url(), API_KEY, _END_TIMEOUT)
        seen: Counter[str] = Counter()
        for custom_id, times in created_ids(batches).items():
            seen[key_of(custom_id)] += times
        self._totals.batches += len(batches)
        expected = {f"{group}-{i}" for group in groups for i in range(1, requests + 1)}
        self._totals.requests += len(expected)
        twice = {custom_id: n for custom_id, n in seen.items() if n > 1}
        missing = expected - set(seen)
        if twice:
            self._totals.double_creates += len(twice)
            raise AssertionError(f"created more than once (the SDK's results): {dict(sorted(twice.items())[:10])}")
        if missing:
            raise AssertionError(f"never created: {sorted(missing)[:10]}")
        stats = self.emulator_stats()
        created = dict(keys_created(stats[_PROVIDERS[self._provider].created_stat]))
        if any(n != 1 for n in created.values()) or set(created) != expected:
            raise AssertionError(f"the emulator's created_custom_ids disagree: {created}")


__all__ = ["REPLY", "SoakLibrary", "Totals"]
